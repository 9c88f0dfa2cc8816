/*
 * One member of a share group (KIP-932) in the share/streams lab (tests/share_streams_lab.py):
 * KafkaShareConsumer subscribed to its topics, polling with implicit acknowledgement, as a
 * share-group worker would. SIGTERM closes it (the member leaves the group).
 *
 * Arguments are key=value: bootstrap, group, topics (comma-separated), client.
 * After each poll that returned records it prints `records=<n>` once a second at most.
 */
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public final class LabShareConsumer {
    private LabShareConsumer() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LabArgs.parse(args);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        props.put(ConsumerConfig.GROUP_ID_CONFIG, opts.get("group"));
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, opts.get("client"));
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props);
        CountDownLatch closed = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            consumer.wakeup();
            try {
                closed.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        consumer.subscribe(Arrays.asList(opts.get("topics").split(",")));
        long printed = 0;
        long count = 0;
        try {
            while (true) {
                ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(500));
                count += records.count();
                if (count > 0 && System.currentTimeMillis() - printed > 1000) {
                    System.out.println("records=" + count);
                    printed = System.currentTimeMillis();
                }
            }
        } catch (WakeupException e) {
            // SIGTERM: leave the group
        } finally {
            consumer.close();
            closed.countDown();
        }
    }
}
