"""Example assignor plug-ins."""
