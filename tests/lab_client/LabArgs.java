/* The lab programs' command line: key=value arguments (tests/kafka_lab.py writes them). */
import java.util.HashMap;
import java.util.Map;

final class LabArgs {
    private LabArgs() {
    }

    static Map<String, String> parse(String[] args) {
        Map<String, String> opts = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            opts.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        return opts;
    }
}
