"""`python -m fleet_rebalance.cli <job> ...`: the launcher, as spark-submit.sh runs it."""

import sys

from fleet_rebalance.cli.launcher import main

sys.exit(main())
