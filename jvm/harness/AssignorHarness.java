/*
 * Kafka's own assignors on our cases (tests/java_assignors.py compiles and runs it
 * against the kafka-4 jar set of jvm/pom.xml): the client-side RangeAssignor,
 * RoundRobinAssignor, StickyAssignor and CooperativeStickyAssignor, and the group
 * coordinator's UniformAssignor (KIP-848).
 *
 *   java AssignorHarness cases.json out.json [budget_ms]
 *
 * cases.json: {"cases": [{"assignor", "partitions_per_topic": {topic: count},
 * "partition_racks": [[topic, partition, [rack, ...]]], "members": [[member id, [topics],
 * [[topic, partition] owned], generation, group.instance.id or null, rack or null]]}]},
 * members in JoinGroup order; optionally "topic_ids": {topic: Uuid string}. out.json: {"cases": [{"assignment": {member: [[topic,
 * partition]]}, "median_ms": m, "runs": n}]}: with a budget, each case runs until it has
 * spent budget_ms (at least 3 runs after a warm-up one) and m is the median.
 *
 * Members reach the client assignors as a consumer's JoinGroup carries them: owned
 * partitions and generation in the subscription, and the sticky assignors' user data
 * from the assignor itself (onAssignment, then subscriptionUserData). The uniform
 * assignor takes topic ids: a case's own ("topic_ids", as a cluster gives them), or
 * for a topic without one an id whose hashCode is the name's String.hashCode and whose
 * order is the name's, so the ties Kafka breaks by topic id fall as our port breaks
 * them on names.
 */
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.File;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;
import org.apache.kafka.coordinator.group.modern.Assignment;
import org.apache.kafka.coordinator.group.modern.GroupSpecImpl;
import org.apache.kafka.coordinator.group.modern.MemberSubscriptionAndAssignmentImpl;

public final class AssignorHarness {
    private static final ObjectMapper JSON = new ObjectMapper();

    private AssignorHarness() {
    }

    public static void main(String[] args) throws Exception {
        JsonNode input = JSON.readTree(new File(args[0]));
        double budgetMs = args.length > 2 ? Double.parseDouble(args[2]) : 0;
        ArrayNode results = JSON.createArrayNode();
        for (JsonNode c : input.get("cases")) {
            Case run = new Case(c);
            Map<String, List<TopicPartition>> assignment = run.assign();
            List<Double> times = new ArrayList<>();
            long started = System.nanoTime();
            while (budgetMs > 0 && (times.size() < 3 || (System.nanoTime() - started) / 1e6 < budgetMs)) {
                long t0 = System.nanoTime();
                run.assign();
                times.add((System.nanoTime() - t0) / 1e6);
            }
            ObjectNode out = results.addObject();
            ObjectNode members = out.putObject("assignment");
            for (Map.Entry<String, List<TopicPartition>> e : assignment.entrySet()) {
                ArrayNode tps = members.putArray(e.getKey());
                for (TopicPartition tp : e.getValue()) {
                    tps.addArray().add(tp.topic()).add(tp.partition());
                }
            }
            Collections.sort(times);
            out.put("median_ms", times.isEmpty() ? 0 : times.get(times.size() / 2));
            out.put("runs", times.size());
        }
        ObjectNode root = JSON.createObjectNode();
        root.set("cases", results);
        JSON.writeValue(new File(args[1]), root);
    }

    /** One case, its inputs built once; assign() is what is timed. */
    private static final class Case {
        final String assignor;
        final Map<String, Integer> counts = new HashMap<>();
        final Map<TopicPartition, List<String>> racks = new HashMap<>();
        final List<JsonNode> members = new ArrayList<>();
        Cluster cluster;
        ConsumerPartitionAssignor.GroupSubscription group;
        GroupSpec spec;
        SubscribedTopicDescriber describer;
        Map<String, Uuid> ids;
        JsonNode topicIds;

        Case(JsonNode c) {
            assignor = c.get("assignor").asText();
            c.get("partitions_per_topic").fields().forEachRemaining(e -> counts.put(e.getKey(), e.getValue().asInt()));
            for (JsonNode r : c.withArray("partition_racks")) {
                List<String> names = new ArrayList<>();
                r.get(2).forEach(n -> names.add(n.asText()));
                racks.put(new TopicPartition(r.get(0).asText(), r.get(1).asInt()), names);
            }
            c.get("members").forEach(members::add);
            topicIds = c.get("topic_ids");
            if (assignor.equals("uniform")) {
                buildUniform();
            } else {
                buildClassic();
            }
        }

        Map<String, List<TopicPartition>> assign() {
            if (assignor.equals("uniform")) {
                GroupAssignment result = new UniformAssignor().assign(spec, describer);
                Map<Uuid, String> names = new HashMap<>();
                ids.forEach((name, id) -> names.put(id, name));
                Map<String, List<TopicPartition>> out = new HashMap<>();
                for (Map.Entry<String, MemberAssignment> e : result.members().entrySet()) {
                    List<TopicPartition> tps = new ArrayList<>();
                    e.getValue().partitions().forEach((id, ps) -> ps.forEach(p -> tps.add(new TopicPartition(names.get(id), p))));
                    out.put(e.getKey(), tps);
                }
                return out;
            }
            Map<String, List<TopicPartition>> out = new HashMap<>();
            classic(assignor).assign(cluster, group).groupAssignment()
                .forEach((member, a) -> out.put(member, a.partitions()));
            return out;
        }

        private void buildClassic() {
            Map<String, Node> nodes = new HashMap<>();
            List<PartitionInfo> partitions = new ArrayList<>();
            for (Map.Entry<String, Integer> t : counts.entrySet()) {
                for (int p = 0; p < t.getValue(); p++) {
                    List<Node> replicas = new ArrayList<>();
                    for (String rack : racks.getOrDefault(new TopicPartition(t.getKey(), p), List.of())) {
                        replicas.add(nodes.computeIfAbsent(rack, r -> new Node(nodes.size(), "broker-" + r, 9092, r)));
                    }
                    Node[] array = replicas.toArray(new Node[0]);
                    partitions.add(new PartitionInfo(t.getKey(), p, array.length > 0 ? array[0] : null, array, array));
                }
            }
            cluster = new Cluster("lab", nodes.values(), partitions, Set.of(), Set.of());
            Map<String, ConsumerPartitionAssignor.Subscription> subscriptions = new HashMap<>();
            for (JsonNode m : members) {
                String member = m.get(0).asText();
                List<String> topics = new ArrayList<>();
                m.get(1).forEach(t -> topics.add(t.asText()));
                List<TopicPartition> owned = new ArrayList<>();
                m.get(2).forEach(tp -> owned.add(new TopicPartition(tp.get(0).asText(), tp.get(1).asInt())));
                int generation = m.get(3).asInt();
                Optional<String> instance = text(m.get(4));
                Optional<String> rack = text(m.get(5));
                ByteBuffer userData = null;
                ConsumerPartitionAssignor client = classic(assignor);
                if (generation >= 0 && (assignor.equals("sticky") || assignor.equals("cooperative-sticky"))) {
                    // The member's own assignor remembers its last assignment and generation.
                    client.onAssignment(new ConsumerPartitionAssignor.Assignment(owned),
                        new ConsumerGroupMetadata("lab", generation, member, instance));
                    userData = client.subscriptionUserData(new HashSet<>(topics));
                }
                List<TopicPartition> ownedSent = assignor.equals("sticky") || assignor.equals("range")
                    || assignor.equals("roundrobin") ? List.of() : owned;
                ConsumerPartitionAssignor.Subscription s = new ConsumerPartitionAssignor.Subscription(
                    topics, userData, ownedSent, generation, rack);
                s.setGroupInstanceId(instance);
                subscriptions.put(member, s);
            }
            group = new ConsumerPartitionAssignor.GroupSubscription(subscriptions);
        }

        private void buildUniform() {
            ids = new HashMap<>();
            int rank = 1;
            for (String name : new TreeSet<>(counts.keySet())) {
                if (topicIds != null && topicIds.hasNonNull(name)) {
                    ids.put(name, Uuid.fromString(topicIds.get(name).asText()));
                } else {
                    long hash = name.hashCode() & 0xffffffffL;
                    ids.put(name, new Uuid(rank, rank ^ hash));
                }
                rank++;
            }
            Map<String, MemberSubscriptionAndAssignmentImpl> specs = new HashMap<>();
            Map<Uuid, Map<Integer, String>> inverted = new HashMap<>();
            Set<String> firstTopics = null;
            boolean homogeneous = true;
            for (JsonNode m : members) {
                String member = m.get(0).asText();
                List<String> listed = new ArrayList<>();
                m.get(1).forEach(t -> listed.add(t.asText()));
                Set<String> names = new HashSet<>(listed);  // as ConsumerGroupMember holds them
                if (firstTopics == null) {
                    firstTopics = names;
                } else if (!firstTopics.equals(names)) {
                    homogeneous = false;
                }
                Set<Uuid> subscribed = new HashSet<>();
                for (String name : names) {
                    if (ids.containsKey(name)) {
                        subscribed.add(ids.get(name));
                    }
                }
                // As Assignment.fromRecord builds it: Collectors.toMap puts each topic in
                // the listed order (computeIfAbsent would put a bucket's later topic first)
                // and copies its partitions with new HashSet<>(list).
                Map<Uuid, List<Integer>> listedOwned = new LinkedHashMap<>();
                for (JsonNode tp : m.get(2)) {
                    Uuid id = ids.get(tp.get(0).asText());
                    if (id == null) {
                        continue;
                    }
                    listedOwned.computeIfAbsent(id, k -> new ArrayList<>()).add(tp.get(1).asInt());
                    inverted.computeIfAbsent(id, k -> new HashMap<>()).put(tp.get(1).asInt(), member);
                }
                Map<Uuid, Set<Integer>> owned = new HashMap<>();
                listedOwned.forEach((id, partitions) -> owned.put(id, new HashSet<>(partitions)));
                specs.put(member, new MemberSubscriptionAndAssignmentImpl(text(m.get(5)), text(m.get(4)),
                    subscribed, new Assignment(Collections.unmodifiableMap(owned))));
            }
            spec = new GroupSpecImpl(Collections.unmodifiableMap(specs),
                homogeneous ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS, inverted);
            Map<Uuid, String> names = new HashMap<>();
            ids.forEach((name, id) -> names.put(id, name));
            describer = new SubscribedTopicDescriber() {
                @Override
                public int numPartitions(Uuid topicId) {
                    String name = names.get(topicId);
                    return name == null ? -1 : counts.get(name);
                }

                @Override
                public Set<String> racksForPartition(Uuid topicId, int partition) {
                    return new HashSet<>(racks.getOrDefault(new TopicPartition(names.get(topicId), partition), List.of()));
                }
            };
        }

        private static Optional<String> text(JsonNode node) {
            return node == null || node.isNull() ? Optional.empty() : Optional.of(node.asText());
        }

        private static ConsumerPartitionAssignor classic(String name) {
            switch (name) {
                case "range":
                    return new RangeAssignor();
                case "roundrobin":
                    return new RoundRobinAssignor();
                case "sticky":
                    return new StickyAssignor();
                case "cooperative-sticky":
                    return new CooperativeStickyAssignor();
                default:
                    throw new IllegalArgumentException("no Kafka assignor " + name);
            }
        }
    }
}
