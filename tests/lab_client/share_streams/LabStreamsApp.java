/*
 * One instance of the share/streams lab's Kafka Streams application (tests/share_streams_lab.py)
 * on the streams rebalance protocol (KIP-1071, `group.protocol=streams`): it re-keys its input
 * (subtopology 0, through a repartition topic) and counts per key (subtopology 1, a state
 * store), so the group has two subtopologies and, with the group config
 * streams.num.standby.replicas=1 (the broker assigns the tasks: the client's
 * num.standby.replicas does not count on this protocol), standby tasks of the stateful one.
 * SIGTERM closes it (the member leaves the group).
 *
 * Arguments are key=value: bootstrap, group (application.id), topic, client, state (state.dir).
 * Every state change prints `state=<STATE>`.
 */
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.Materialized;

public final class LabStreamsApp {
    private LabStreamsApp() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LabArgs.parse(args);
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, opts.get("group"));
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        props.put(StreamsConfig.CLIENT_ID_CONFIG, opts.get("client"));
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.STATE_DIR_CONFIG, opts.get("state"));
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, "1");
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "1000");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class.getName());
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(opts.get("topic"))
            .selectKey((key, value) -> key == null ? "none" : key.substring(0, Math.min(5, key.length())))
            .groupByKey()
            .count(Materialized.as("lab-counts"));
        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> System.out.println("state=" + now));
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            streams.close();
            closed.countDown();
        }));
        streams.start();
        closed.await();
    }
}
