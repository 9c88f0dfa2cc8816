/*
 * The Kafka lab's producer (tests/kafka_lab.py): keyed records into every topic named,
 * `rate` records a second each, so committed offsets and log ends keep moving. Keys are
 * skewed (a few hot keys), as real keyed topics are, and placed by the default partitioner.
 *
 * Arguments are key=value: bootstrap, topics (comma-separated), rate.
 */
import java.util.Map;
import java.util.Properties;
import java.util.Random;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

public final class LabProducer {
    private LabProducer() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = LabArgs.parse(args);
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, opts.get("bootstrap"));
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.LINGER_MS_CONFIG, "20");
        props.put(ProducerConfig.ACKS_CONFIG, "1");
        String[] topics = opts.get("topics").split(",");
        int rate = Integer.parseInt(opts.getOrDefault("rate", "20"));
        Random random = new Random(20261120L);
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            long sent = 0;
            long started = System.nanoTime();
            while (true) {
                for (String topic : topics) {
                    String key = "key-" + (int) Math.floor(Math.pow(random.nextDouble(), 3) * 200);
                    producer.send(new ProducerRecord<>(topic, key, "value-" + sent));
                }
                sent++;
                long due = started + sent * 1_000_000_000L / rate;
                long wait = due - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000L, (int) (wait % 1_000_000L));
                }
            }
        }
    }
}
