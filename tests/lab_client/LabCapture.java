/*
 * The Kafka lab's capturer (tests/kafka_lab.py): every `interval_ms` it runs Kafka's own
 * command-line tools, in this one JVM instead of a JVM per view, and writes what they print
 * (stdout and stderr, as `2>&1` captures them) in the raw_root layout:
 *   <out>/<cluster>/captures/<UTC yyyy-MM-ddTHHmmssZ>/consumer-groups-offsets.txt ...
 * Views: `kafka-consumer-groups.sh --describe --all-groups` (offsets), `... --members
 * --verbose` (members), `... --state` (state), `kafka-topics.sh --describe` (topics),
 * `kafka-configs.sh --describe --entity-type brokers --all` (brokers) and
 * `kafka-log-dirs.sh --describe` (log-dirs). It
 * stops when the file `stop` exists, then writes each group's generation (group epoch) as
 * the brokers report it, where the admin API does, to the file `generations`.
 *
 * Arguments are key=value: bootstrap, out, cluster, interval_ms, stop, generations.
 */
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ConsumerGroupListing;

public final class LabCapture {
    private static final DateTimeFormatter STAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HHmmss'Z'");
    private static final String[] GROUP_TOOLS = {
        "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
        "org.apache.kafka.tools.consumergroup.ConsumerGroupCommand",
    };
    private static final String TOPIC_TOOL = "org.apache.kafka.tools.TopicCommand";
    // The brokers' racks and replicas' sizes (FORMATS 1.7): ConfigCommand is Scala in
    // core up to its Java port in tools; LogDirsCommand is Java in both lines.
    private static final String[] CONFIG_TOOLS = {
        "org.apache.kafka.tools.ConfigCommand", "kafka.admin.ConfigCommand",
    };
    private static final String LOG_DIRS_TOOL = "org.apache.kafka.tools.LogDirsCommand";

    /** The running tool's output and its length when the tool called Exit.exit (-1: not yet). */
    private static volatile ByteArrayOutputStream output;
    private static volatile int exitedAt = -1;

    private LabCapture() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LabArgs.parse(args);
        String bootstrap = opts.get("bootstrap");
        Path root = Path.of(opts.get("out"), opts.get("cluster"));
        Path stop = Path.of(opts.get("stop"));
        long interval = Long.parseLong(opts.getOrDefault("interval_ms", "10000"));
        keepRunningAfterTools();
        Method groups = toolMain(GROUP_TOOLS);
        Method topics = toolMain(new String[] {TOPIC_TOOL});
        Method configs = toolMain(CONFIG_TOOLS);
        Method logDirs = toolMain(new String[] {LOG_DIRS_TOOL});
        String[] brokers = {"--bootstrap-server", bootstrap, "--describe", "--entity-type", "brokers", "--all"};
        // One round whose output is dropped: the first run of each tool loads its classes
        // and connects for seconds; a capture then takes well under a second after its stamp.
        Path warmUp = Files.createTempDirectory("lab-capture");
        String[] describe = {"--bootstrap-server", bootstrap, "--describe"};
        run(groups, warmUp.resolve("state.txt"), concat(describe, "--all-groups", "--state"));
        run(topics, warmUp.resolve("topics.txt"), describe);
        run(configs, warmUp.resolve("brokers.txt"), brokers);
        run(logDirs, warmUp.resolve("log-dirs.txt"), describe);
        while (!Files.exists(stop)) {
            long started = System.currentTimeMillis();
            Path dir = root.resolve("captures").resolve(STAMP.format(ZonedDateTime.now(ZoneOffset.UTC)));
            Files.createDirectories(dir);
            // --timeout: the group tool's admin calls give up after 5 s by default, which a
            // lab saturating both cores (brokers, members, Spark) can exceed; the tools' other
            // calls wait the admin client's 60 s.
            String[] base = {"--bootstrap-server", bootstrap, "--describe", "--all-groups", "--timeout", "30000"};
            run(groups, dir.resolve("consumer-groups-offsets.txt"), base);
            run(groups, dir.resolve("consumer-groups-members.txt"), concat(base, "--members", "--verbose"));
            run(groups, dir.resolve("consumer-groups-state.txt"), concat(base, "--state"));
            run(topics, dir.resolve("topics.txt"), new String[] {"--bootstrap-server", bootstrap, "--describe"});
            run(configs, dir.resolve("brokers.txt"), brokers);
            run(logDirs, dir.resolve("log-dirs.txt"), new String[] {"--bootstrap-server", bootstrap, "--describe"});
            long rest = interval - (System.currentTimeMillis() - started);
            if (rest > 0) {
                Thread.sleep(rest);
            }
        }
        generations(bootstrap, Path.of(opts.get("generations")));
    }

    /** The tools end with Exit.exit (org.apache.kafka.common.utils.Exit, moved to
     *  ...utils.internals in 4.x); here they return to the loop instead. */
    private static void keepRunningAfterTools() throws Exception {
        Class<?> exit = null;
        for (String name : new String[] {
            "org.apache.kafka.common.utils.Exit", "org.apache.kafka.common.utils.internals.Exit"}) {
            try {
                exit = Class.forName(name);
                break;
            } catch (ClassNotFoundException e) {
                // the other release's
            }
        }
        Class<?> procedure = Class.forName(exit.getName() + "$Procedure");
        Object thrower = java.lang.reflect.Proxy.newProxyInstance(
            procedure.getClassLoader(), new Class<?>[] {procedure}, (proxy, method, args) -> {
                if (method.getDeclaringClass() == Object.class) {
                    return method.invoke(LabCapture.class, args);
                }
                if (exitedAt < 0 && output != null) {
                    exitedAt = output.size();  // the first exit ends the process
                }
                throw new ToolExit((Integer) args[0]);
            });
        exit.getMethod("setExitProcedure", procedure).invoke(null, thrower);
    }

    private static Method toolMain(String[] names) throws Exception {
        for (String name : names) {
            try {
                return Class.forName(name).getMethod("main", String[].class);
            } catch (ClassNotFoundException e) {
                // another release's package
            }
        }
        throw new ClassNotFoundException(String.join(" or ", names));
    }

    private static String[] concat(String[] base, String... more) {
        List<String> all = new ArrayList<>(List.of(base));
        all.addAll(List.of(more));
        return all.toArray(new String[0]);
    }

    /** One tool run, its stdout and stderr (interleaved as `2>&1` would) into `file`, up to
     *  its Exit.exit: the process would end there, so what the tool prints after the exit
     *  (4.x's TopicCommand catches the exit's exception and prints it) is not its output. */
    private static synchronized void run(Method tool, Path file, String[] args) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        output = bytes;
        exitedAt = -1;
        PrintStream capture = new PrintStream(bytes, true, StandardCharsets.UTF_8);
        PrintStream out = System.out;
        PrintStream err = System.err;
        System.setOut(capture);
        System.setErr(capture);
        try {
            invoke(tool, args, capture);
        } catch (Throwable e) {
            Throwable cause = e;
            while ((cause instanceof java.lang.reflect.InvocationTargetException
                    || cause instanceof java.lang.reflect.UndeclaredThrowableException)
                    && cause.getCause() != null) {
                cause = cause.getCause();
            }
            if (!(cause instanceof ToolExit)) {
                cause.printStackTrace(capture);
            }
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        capture.flush();
        byte[] written = bytes.toByteArray();
        if (exitedAt >= 0) {
            written = java.util.Arrays.copyOf(written, exitedAt);
        }
        Path partial = file.resolveSibling("." + file.getFileName());
        Files.write(partial, written);
        Files.move(partial, file);
    }

    /** A Scala tool (3.x's ConfigCommand) prints through scala.Console, which keeps the
     *  System.out of its first use: its output is captured by Console.withOut as well. */
    private static void invoke(Method tool, String[] args, PrintStream capture) throws Throwable {
        Class<?> console;
        try {
            console = Class.forName("scala.Console");
        } catch (ClassNotFoundException e) {
            tool.invoke(null, (Object) args);  // no Scala on this line's classpath
            return;
        }
        Class<?> function0 = Class.forName("scala.Function0");
        Object body = java.lang.reflect.Proxy.newProxyInstance(
            function0.getClassLoader(), new Class<?>[] {function0}, (proxy, method, margs) -> {
                if (method.getName().equals("apply")) {
                    return tool.invoke(null, (Object) args);
                }
                if (method.getDeclaringClass() == Object.class) {
                    return method.invoke(LabCapture.class, margs);
                }
                throw new UnsupportedOperationException(method.getName());
            });
        console.getMethod("withOut", PrintStream.class, function0).invoke(null, capture, body);
    }

    /** Each group's generation (KIP-848 group epoch, classic generation) where the admin
     *  API gives it (ConsumerGroupDescription.groupEpoch, Kafka 4.x); `-` where not. */
    private static void generations(String bootstrap, Path file) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        StringBuilder lines = new StringBuilder();
        try (Admin admin = Admin.create(props)) {
            List<String> ids = new ArrayList<>();
            for (ConsumerGroupListing listing : admin.listConsumerGroups().all().get()) {
                ids.add(listing.groupId());
            }
            Map<String, ConsumerGroupDescription> described = admin.describeConsumerGroups(ids).all().get();
            Method epoch = null;
            try {
                epoch = ConsumerGroupDescription.class.getMethod("groupEpoch");
            } catch (NoSuchMethodException e) {
                // before 4.x
            }
            for (Map.Entry<String, ConsumerGroupDescription> entry : described.entrySet()) {
                String value = "-";
                if (epoch != null) {
                    Object found = epoch.invoke(entry.getValue());
                    if (found instanceof java.util.Optional<?> optional && optional.isPresent()) {
                        value = optional.get().toString();
                    }
                }
                lines.append(entry.getKey()).append(' ').append(value).append('\n');
            }
        }
        Files.writeString(file, lines.toString());
    }

    private static final class ToolExit extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ToolExit(int status) {
            super("exit " + status, null, false, false);
        }
    }
}
