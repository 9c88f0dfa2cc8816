/*
 * One member of a Kafka lab consumer group (tests/kafka_lab.py compiles and starts it): the
 * plain Java client, subscribed, polling and auto-committing, as a service would be.
 *
 * Arguments are key=value: bootstrap, group, topics (comma-separated), client, and optionally
 * protocol (classic | consumer), assignor (a classic strategy name: range, roundrobin, sticky,
 * cooperative-sticky; or a server-side assignor for the consumer protocol), instance
 * (group.instance.id), session_ms and poll_ms (classic only: the consumer protocol takes
 * the brokers' timeouts), and stall (a file: while it exists the poll loop stops between
 * two polls, as a consumer stuck processing a record does, until max.poll.interval.ms has
 * passed and the heartbeat thread leaves the group).
 *
 * SIGTERM closes the consumer (a LeaveGroup, as a clean shutdown sends); SIGKILL leaves
 * nothing behind, so the coordinator expires the member's session.
 *
 * After every rebalance it prints `generation=<n> member=<id> assigned=<partitions>`: the
 * generation (classic) or member epoch (consumer protocol) the client was given, the lab's
 * record of the brokers' generations that does not come from their logs.
 */
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Collection;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class LabConsumer {
    private static final Map<String, String> CLASSIC_ASSIGNORS = Map.of(
        "range", "org.apache.kafka.clients.consumer.RangeAssignor",
        "roundrobin", "org.apache.kafka.clients.consumer.RoundRobinAssignor",
        "sticky", "org.apache.kafka.clients.consumer.StickyAssignor",
        "cooperative-sticky", "org.apache.kafka.clients.consumer.CooperativeStickyAssignor");

    private LabConsumer() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LabArgs.parse(args);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, opts.get("group"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, opts.get("client"));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        props.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, "1000");
        // Added partitions are seen within seconds, not the 5-minute default.
        props.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, "3000");
        String protocol = opts.getOrDefault("protocol", "classic");
        String assignor = opts.get("assignor");
        if (protocol.equals("consumer")) {
            props.put("group.protocol", "consumer");
            if (assignor != null) {
                props.put("group.remote.assignor", assignor);
            }
        } else {
            if (assignor != null) {
                props.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG,
                    CLASSIC_ASSIGNORS.getOrDefault(assignor, assignor));
            }
            props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, opts.getOrDefault("session_ms", "10000"));
            props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        }
        props.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, opts.getOrDefault("poll_ms", "300000"));
        if (opts.containsKey("instance")) {
            props.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, opts.get("instance"));
        }
        Path stall = opts.containsKey("stall") ? Path.of(opts.get("stall")) : null;
        long stallMs = Long.parseLong(opts.getOrDefault("poll_ms", "300000")) + 5000;

        KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props);
        CountDownLatch closed = new CountDownLatch(1);
        Thread main = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                main.join(20_000);
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try {
            consumer.subscribe(Arrays.asList(opts.get("topics").split(",")), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    System.out.println("generation=" + consumer.groupMetadata().generationId()
                        + " member=" + consumer.groupMetadata().memberId()
                        + " assigned=" + consumer.assignment());
                    System.out.flush();
                }
            });
            System.out.println("started " + opts.get("client"));
            while (true) {
                consumer.poll(Duration.ofMillis(200));
                if (stall != null && Files.exists(stall)) {
                    Files.delete(stall);
                    System.out.println("stalled " + stallMs + " ms");
                    Thread.sleep(stallMs);
                }
            }
        } catch (WakeupException e) {
            // SIGTERM: leave the group cleanly.
        } finally {
            consumer.close(Duration.ofSeconds(10));
            closed.countDown();
        }
    }
}
