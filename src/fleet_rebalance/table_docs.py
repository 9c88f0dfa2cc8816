"""What every output table and column means, in one place.

The schemas say what a column holds, these words what it means: docs/tables.md is
rendered from both (pipeline/table_reference.py, so the reference cannot drift from the
schemas), and the storage layer writes the same words into each table's Delta schema as
column comments when it creates the table, so `DESCRIBE <table>` and any Delta reader
show them. The wording follows DESIGN.md's table section; units are in the words.
Spark-free: the storage layer and the docs both read it.
"""

from __future__ import annotations

from typing import TypedDict


class TableDoc(TypedDict):
    about: str
    columns: dict[str, str]


# Columns several tables share, with the same meaning in each.
_CLUSTER = {"cluster": "Kafka cluster name, from the capture's path (capture.path_pattern)."}
_GROUP = {**_CLUSTER, "group_id": "Consumer group id."}
_TOPIC_PARTITION = {"topic": "Topic name.", "partition": "Partition number."}
_CAPTURED = {
    "captured_at": "When the capture was taken (UTC), from the file's path.",
    "capture_date": "UTC date of captured_at; the partition column.",
}
_SOURCE = {
    "source_file": "Path of the raw file the row was read from, relative to raw_root.",
    "line_number": "1-based line of source_file the row was read from.",
}
_GOLD_GROUP = {**_GROUP, "date": "The UTC date the row rates; the partition column."}
_EVENT = {
    **_GROUP,
    "event_seq": "The event's number within the group's replayed day, from 1.",
    "event_date": "The replayed UTC date; the partition column.",
}
_ASSIGNOR = {
    "assignor": (
        "Assignor the row measures: range, roundrobin, sticky, cooperative-sticky, "
        "uniform, a plug-in's name, or observed (the assignment actually captured)."
    ),
    "protocol": "Rebalance protocol of the assignor: eager or cooperative.",
}
_SAVED = {
    "paused_partitions_saved": (
        "Paused partitions the recommended change saves over the day against what the "
        "group runs; 0 for keep, null when not measured and for rack_aware (its saving is "
        "in bytes)."
    ),
    "rebalances_saved": (
        "Rebalances the change avoids (static membership, consumer settings, a crash loop "
        "fixed); null for assignor and protocol changes and keep."
    ),
    "paused_partition_seconds_saved": (
        "Partition-seconds of pause the change saves (partitions x seconds); null where no "
        "coordinator log times the rebalances."
    ),
    "messages_delayed_saved": (
        "Messages delayed by the pauses the change saves (partition-seconds x each "
        "partition's produce rate); 0 for keep, null where no coordinator log times the "
        "rebalances."
    ),
    "cross_zone_bytes_saved": (
        "rack_aware: bytes a day its reads would no longer cross availability zones "
        "(cross_zone_traffic's follower-fetching or rack-aware saving, "
        "metrics/rack_aware_rules.py); 0 for keep where the group has a cross_zone_traffic "
        "row; null otherwise (no row: no broker zone known; or another change)."
    ),
    "cross_zone_cost_saved": (
        "cross_zone_bytes_saved at cross_zone_traffic's price_per_gb, in the bill's currency."
    ),
}
_CHANGE_KIND = {
    "change_kind": (
        "The change recommended: assignor, protocol_migration, static_membership, "
        "consumer_config, fix_crash_loop, stuck_partition, rack_aware or keep."
    ),
    "prerequisites": (
        "What the change takes first (client and broker versions, group.protocol=consumer, "
        "a two-bounce rolling upgrade, ...); null when nothing."
    ),
}
_BURROW = "Burrow status (OK, WARN, ERR, STOP, STALL, REWIND)"
_GROUP_TYPE = {
    "group_type": (
        "Group type: classic, consumer, share or streams, where the capture says it (a "
        "share or streams tool's header, a group list's TYPE, jsonl `type`; "
        "docs/formats-share-streams.md); null where it does not, as in "
        "kafka-consumer-groups.sh's describe views."
    ),
}

BRONZE: dict[str, TableDoc] = {
    "offsets": {
        "about": (
            "One row per partition line of `kafka-consumer-groups.sh --describe` "
            "(offsets view; the share and streams groups' tools alike) or a jsonl snapshot: "
            "a group's committed offset, log end and lag at a capture."
        ),
        "columns": {
            **_GROUP,
            **_TOPIC_PARTITION,
            "current_offset": (
                "Committed offset of the group on the partition; null for `-` and for a share "
                "group (no commit: see start_offset)."
            ),
            "log_end_offset": (
                "Partition's log-end offset at the capture; null for `-` and for a share group."
            ),
            "lag": (
                "log_end_offset - current_offset in messages, as the tool printed it (a share "
                "group's LAG, a streams group's OFFSET-LAG); null for `-`."
            ),
            "consumer_id": "Member id of the partition's owner; null when unowned (`-`).",
            "host": "Owner's client host; null when unowned.",
            "client_id": "Owner's client.id; null when unowned.",
            **_CAPTURED,
            **_SOURCE,
            **_GROUP_TYPE,
            "start_offset": (
                "A share group's START-OFFSET: the share-partition start offset (first record "
                "not yet acknowledged), not a committed offset; null for other groups and `-`."
            ),
        },
    },
    "members": {
        "about": (
            "One row per group member at a capture (`--describe --members [--verbose]` of "
            "the consumer, share or streams groups' tool, or a jsonl snapshot): identity, "
            "assignment (a streams member's tasks) and subscription."
        ),
        "columns": {
            **_GROUP,
            "consumer_id": "The member's member id.",
            "group_instance_id": "group.instance.id of a static member; null for dynamic members.",
            "host": "The member's client host.",
            "client_id": "The member's client.id.",
            "partition_count": "Number of partitions assigned to the member (#PARTITIONS).",
            "assignment": "Partitions assigned to the member, as (topic, partition).",
            "subscription": "Topics the member subscribes to, captured or inferred.",
            "subscription_inferred": (
                "True when subscription was not captured but inferred as the topics the "
                "group has offsets for at that capture."
            ),
            **_CAPTURED,
            **_SOURCE,
            "rebalancing": (
                "True when the tool printed `Consumer group ... is rebalancing` above the "
                "group: a capture caught mid-rebalance, no settled snapshot."
            ),
            **_GROUP_TYPE,
            "tasks": (
                "A streams member's tasks as (kind, subtopology, partition), kind active, "
                "standby, warmup or (`--verbose`) target-active, target-standby, "
                "target-warmup; null for other members (a streams member's assignment and "
                "partition_count stay null)."
            ),
            "member_epoch": (
                "The member's epoch under the consumer protocol (KIP-848): CURRENT-EPOCH of "
                "4.x `--members --verbose`, jsonl member_epoch; null for `-` (a classic "
                "group), a share or streams member, or a capture without it."
            ),
            "target_epoch": (
                "Epoch of the member's target assignment (TARGET-EPOCH, jsonl target_epoch); "
                "above member_epoch while the member reconciles; null as member_epoch."
            ),
            "upgraded": (
                "UPGRADED (jsonl upgraded), printed only for a group with both classic and "
                "consumer members: true for a consumer-protocol member, false for a classic "
                "member inside a consumer group (a migration in progress); null otherwise."
            ),
            "rack": (
                "The member's client.rack as an exporter's jsonl gives it (fleet-capture: "
                "the admin API's member rack); null from the CLI views, which never print it."
            ),
            "generation": (
                "The generation the member last joined, as an exporter's jsonl gives it; "
                "null from the CLI views."
            ),
        },
    },
    "group_states": {
        "about": (
            "One row per group at a capture (`--describe --state`, or a group list): "
            "coordinator, strategy and state."
        ),
        "columns": {
            **_GROUP,
            "coordinator_host": "Group coordinator broker as host:port.",
            "coordinator_id": "Group coordinator broker id.",
            "assignment_strategy": "The group's declared assignor (ASSIGNMENT-STRATEGY).",
            "state": (
                "Group state: Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, ..."
            ),
            "member_count": "Number of members (#MEMBERS).",
            **_CAPTURED,
            **_SOURCE,
            **_GROUP_TYPE,
            "group_epoch": (
                "The group's epoch (GROUP-EPOCH of 4.x `--state --verbose`, jsonl "
                "group_epoch), bumped whenever the group needs a new assignment; null for "
                "`-` (a classic group) or a capture without it."
            ),
            "target_assignment_epoch": (
                "Epoch of the group's target assignment (TARGET-ASSIGNMENT-EPOCH, jsonl "
                "target_assignment_epoch); below group_epoch until the coordinator computes "
                "the new target; null as group_epoch (the share tool's ASSIGNMENT-EPOCH is "
                "not stored)."
            ),
        },
    },
    "topic_partitions": {
        "about": "One row per partition line of `kafka-topics.sh --describe`.",
        "columns": {
            **_CLUSTER,
            **_TOPIC_PARTITION,
            "topic_id": "Topic's id (TopicId); null where the tool printed none.",
            "leader": "Leader broker id; null for none (-1).",
            "replicas": "Replica broker ids, in assignment order.",
            "isr": "In-sync replica broker ids.",
            **_CAPTURED,
            **_SOURCE,
        },
    },
    "brokers": {
        "about": (
            "One row per broker per capture of the brokers' racks: `kafka-configs.sh "
            "--describe --entity-type brokers --all` (its broker.rack line), or fleet-capture's "
            "cluster description. A broker's zone for cross-zone traffic is its rack."
        ),
        "columns": {
            **_CLUSTER,
            "broker": "Broker (node) id.",
            "rack": "The broker's broker.rack; null where it has none (the tool prints null).",
            **_CAPTURED,
            **_SOURCE,
        },
    },
    "partition_sizes": {
        "about": (
            "One row per replica per capture of `kafka-log-dirs.sh --describe`: the bytes "
            "the replica's log holds on its broker's disk. Growth between captures is bytes "
            "written; a drop is retention deleting segments, not negative traffic."
        ),
        "columns": {
            **_CLUSTER,
            **_TOPIC_PARTITION,
            "broker": "Broker whose disk holds the replica.",
            "log_dir": "The log directory holding it, as the broker reports it.",
            "size_bytes": "Bytes of the replica's log segments (size).",
            "offset_lag": (
                "offsetLag as reported: the high watermark minus the log end offset for the "
                "current replica, the distance to the current replica for a future one."
            ),
            "is_future": (
                "True for a future replica (being moved between the broker's log dirs); "
                "its bytes are a copy, not the partition's."
            ),
            **_CAPTURED,
            **_SOURCE,
        },
    },
    "coordinator_events": {
        "about": (
            "One row per group-coordinator line of a broker's server.log that records a "
            "member joining, leaving, failing or being fenced, or a generation or epoch change."
        ),
        "columns": {
            **_CLUSTER,
            "broker": "Id of the broker whose log holds the line.",
            "logged_at": "The line's timestamp (UTC; capture.log_timezone says how to read it).",
            "event": (
                "What the line records: member_pending, member_joined, static_member_joined, "
                "static_member_rejoined, member_left, member_failed, member_fenced, "
                "prepare_rebalance, stabilized, assignment_received, group_empty, "
                "epoch_bumped, target_assignment."
            ),
            "group_id": "Consumer group id; null for lines that name no group.",
            "generation": (
                "Generation (classic) or group epoch (KIP-848) the line names; null when none."
            ),
            "member_id": "Member id the line names; null when none.",
            "reason": "Rebalance reason the line gives, as logged; null when none.",
            "line": "The log line, verbatim.",
            "log_date": "UTC date of logged_at; the partition column.",
            **_SOURCE,
        },
    },
    "quarantine": {
        "about": "Every input line (or whole file) that could not be read, with the reason.",
        "columns": {
            "source_file": "Path of the raw file, relative to raw_root.",
            "line_number": "1-based line of source_file; null when the whole file is refused.",
            "line": "The line as read (undecodable bytes as \\xNN escapes).",
            "reason": "Why the line was not read.",
            "kind": (
                "Capture kind of the file: offsets, members, state, topics, coordinator_log, "
                "jsonl, brokers, log_dirs, or unknown."
            ),
            "capture_date": "UTC date of the file's capture; the partition column.",
        },
    },
    "ingested_files": {
        "about": (
            "One row per raw file an ingest found: what it was, how it went, and its "
            "checksum, so an unchanged date is skipped."
        ),
        "columns": {
            "path": "Path of the file, relative to raw_root.",
            "size": "File size in bytes.",
            "sha256": "SHA-256 of the file's bytes, hex; null when it could not be read.",
            "kind": "Capture kind recognised from the content (see quarantine.kind).",
            "cluster": "Kafka cluster name, from the path.",
            "captured_at": "Capture time (UTC) from the file's path; null when the path has none.",
            "status": "ok, unverified, incomplete, failed_capture, rejected or skipped.",
            "reason": (
                "Why the status is not ok, or what was quarantined; null when nothing to say."
            ),
            "rows": "Rows the file added to the bronze tables.",
            "quarantined": "Lines of the file sent to quarantine.",
            "run_id": "Id of the run that ingested the file.",
            "ingested_at": "When that run ingested it (UTC).",
            "capture_date": "UTC date the file's rows belong to; the partition column.",
        },
    },
}

SILVER: dict[str, TableDoc] = {
    "rebalance_events": {
        "about": (
            "One row per rebalance of a group as the replay reconstructs it from the "
            "coordinator logs and the captures (initial for a group's first capture)."
        ),
        "columns": {
            **_EVENT,
            "event_at": (
                "When the event happened (UTC): the logged generation's time, else the capture's."
            ),
            "trigger": (
                "What changed: initial, member_joined, member_left, members_replaced, "
                "subscription_changed, partitions_added, mixed or no_change."
            ),
            "members": "Member ids of the group after the event, sorted.",
            "member_count": "Number of members after the event.",
            "partition_count": (
                "Number of partitions the group's members subscribe to after the event."
            ),
            "previous_capture_at": (
                "The capture (or event) the change is measured against: the rebalance "
                "happened between it and event_at; null for initial."
            ),
            "generation": (
                "Coordinator generation or KIP-848 group epoch; null when no log covers it."
            ),
            "source": (
                "Where the event comes from: logs (a logged generation no capture saw), "
                "captures (no log covers the period) or both."
            ),
            "cause": "Rebalance cause (see rebalance_causes.cause); null for initial.",
            "evidence": "The log line or capture fact that decided the cause.",
            "duration_ms": (
                "Logged duration of the generation in milliseconds, to the end of a "
                "cooperative follow-up round; null when no log times it."
            ),
            "static_avoidable": (
                "True when every member the event let go or took in came back within "
                "metrics.static_session_timeout_s: static membership would have avoided it; "
                "null for initial."
            ),
            "capture_difference": (
                "How the confirming capture differs from the log's reconstruction; null "
                "when they agree."
            ),
            "departed": (
                "Every consumer the event let go (group.instance.id, client id or host), "
                "comma-separated."
            ),
            "returned": (
                "Every consumer the event took back in after it had left, comma-separated."
            ),
            "away_ms": (
                "How long those consumers were away (the longest), in milliseconds: from when "
                "each fell silent to its return. A consumer the coordinator expired was "
                "silent for at least its session timeout before the expiry line "
                "(session_timeout_ms), so its absence is that much longer than the time from "
                "the line to its return. Null when it did not come back that day."
            ),
            "session_timeout_ms": (
                "The session timeout of the consumer(s) the event names that the coordinator "
                "expired (the longest), counted in away_ms: as the coordinator logged it for "
                "that consumer (the old coordinator's MemberMetadata(... sessionTimeoutMs=...) "
                "of its clean leaves), else metrics.session_timeout_ms; null when none expired."
            ),
            "session_timeout_assumed": (
                "True when no log line gave session_timeout_ms and metrics.session_timeout_ms "
                "stood in; null when none expired."
            ),
        },
    },
    "assignment_replay": {
        "about": (
            "Each assignor's assignment after each event: one row per event, assignor and member."
        ),
        "columns": {
            **_EVENT,
            "assignor": _ASSIGNOR["assignor"],
            "member_id": "Member id.",
            "partitions": "Partitions (topic, partition) the assignor gave the member.",
        },
    },
    "replay_metrics": {
        "about": "One row per event and assignor: movement, pauses, balance and lag skew.",
        "columns": {
            **_EVENT,
            "event_at": "When the event happened (UTC).",
            "trigger": "The event's trigger (see rebalance_events.trigger).",
            **_ASSIGNOR,
            "member_count": "Members after the event.",
            "partition_count": "Partitions of the topics the group subscribes to after the event.",
            "kept": "Partitions with the same owner before and after the event.",
            "reassigned": (
                "Partitions whose previous owner is still a member but lost them (avoidable moves)."
            ),
            "orphaned": "Partitions whose previous owner left the group.",
            "fresh": (
                "Partitions with no previous owner (first assignment, added partitions, new "
                "topics)."
            ),
            "stickiness": "kept / (kept + reassigned); null when that is 0.",
            "revoked": (
                "Partitions revoked: eager, every partition a surviving member owned; "
                "cooperative, reassigned."
            ),
            "rounds": "Rebalance rounds: eager 1; cooperative 1, or 2 when anything is reassigned.",
            "paused_partitions": (
                "Partitions nobody consumes during the rebalance: eager all, cooperative and "
                "KIP-848 all - kept."
            ),
            "count_min": "Fewest partitions any member owns (0 for a member with none).",
            "count_max": "Most partitions any member owns.",
            "count_spread": "count_max - count_min.",
            "lag_total": (
                "Sum of captured lag over the group's partitions, in messages; null past "
                "2^63 - 1 (each lag is a long, their sum need not be)."
            ),
            "lag_max_member": (
                "Largest member lag (sum of its partitions' lag), in messages; null past 2^63 - 1."
            ),
            "lag_skew": (
                "Largest member lag / mean member lag (1.0 = even); null when total lag is 0."
            ),
            "conforms": (
                "Whether the observed assignment equals what the group's declared assignor "
                "produces, as the group's leader runs it (conformance_basis); null where not "
                "applicable or undecided."
            ),
            "differing_partitions": (
                "Partitions whose observed owner differs from the declared assignor's."
            ),
            "paused_partition_seconds": (
                "paused_partitions x the generation's logged duration, in partition-seconds; "
                "null when no log times the event."
            ),
            "messages_delayed": (
                "Messages produced to the paused partitions during the pause (produce rate "
                "from log-end offsets between captures x duration); null when untimed."
            ),
            "conformance_basis": (
                "Observed rows: whose implementation of the declared assignor the observed "
                "assignment was judged against: kafka (Kafka's own, the coordinator's for "
                "KIP-848) or librdkafka (the group's leader is a librdkafka client: "
                "client.id rdkafka or metrics.client_libraries; librdkafka's own C "
                "assignors), or `undecided: <why>` where conforms is null because that is "
                "not known; null on other assignors' rows and where no declared strategy "
                "is replayed."
            ),
        },
    },
    "replay_errors": {
        "about": (
            "Groups, or one assignor on a group, the replay could not process, with the reason."
        ),
        "columns": {
            **_GROUP,
            "event_seq": "The event that failed; null for a whole group.",
            "assignor": "The assignor that failed; null for a whole group.",
            "reason": "Why.",
            "event_date": "The replayed UTC date; the partition column.",
        },
    },
}

GOLD: dict[str, TableDoc] = {
    "stickiness": {
        "about": (
            "replay_metrics rolled up per group, date and assignor: movement and pauses over the "
            "day."
        ),
        "columns": {
            **_GOLD_GROUP,
            **_ASSIGNOR,
            "events": "Events replayed that day.",
            "kept": "Sum of kept partitions.",
            "reassigned": "Sum of reassigned partitions.",
            "orphaned": "Sum of orphaned partitions.",
            "fresh": "Sum of fresh partitions.",
            "stickiness": "Pooled stickiness: sum kept / (sum kept + sum reassigned); null when 0.",
            "mean_stickiness": "Mean of the events' stickiness where defined.",
            "min_stickiness": "Lowest event stickiness.",
            "revoked": "Sum of revoked partitions.",
            "rounds": "Sum of rebalance rounds.",
            "paused_partitions": "Sum of paused partitions.",
            "max_paused_partitions": "Most partitions paused by one event.",
            "conforming_events": (
                "Events whose observed assignment is what the declared assignor gives."
            ),
            "nonconforming_events": "Events whose observed assignment is not.",
            "differing_partitions": (
                "Sum of partitions whose observed owner differs from the declared assignor's."
            ),
            "paused_partition_seconds": (
                "Sum over the timed events of paused partition-seconds; null when no event is "
                "timed (unknown, not 0)."
            ),
            "timed_events": "Events a coordinator log times (of events).",
            "messages_delayed": "Sum of messages delayed by the pauses; null when none is timed.",
        },
    },
    "skew": {
        "about": (
            "replay_metrics rolled up per group, date and assignor: partition-count balance and "
            "lag skew."
        ),
        "columns": {
            **_GOLD_GROUP,
            "assignor": _ASSIGNOR["assignor"],
            "events": "Events replayed that day.",
            "mean_count_spread": "Mean count_spread over the events.",
            "max_count_spread": "Largest count_spread.",
            "unbalanced_events": "Events with count_spread above 1.",
            "max_partitions_per_member": "Most partitions any member owned after an event.",
            "mean_lag_skew": "Mean lag_skew over the events where defined.",
            "max_lag_skew": "Largest lag_skew.",
            "max_member_lag": "Largest member lag, in messages.",
            "last_count_spread": (
                "count_spread after the day's last event (what the group runs with)."
            ),
            "last_lag_skew": "lag_skew after the day's last event.",
        },
    },
    "lag_distribution": {
        "about": (
            "Per group, topic and date: offset lag percentiles and log2 histogram over the "
            "day's captures, and time lag estimated as Kafka Lag Exporter does."
        ),
        "columns": {
            **_GOLD_GROUP,
            "topic": "Topic name.",
            "partitions": "Distinct partitions sampled.",
            "samples": "Partition lag samples with a known lag.",
            "unknown_lag_samples": "Samples whose lag was not captured (`-`).",
            "lag_p50": "Median partition lag in messages (linear interpolation).",
            "lag_p90": "90th percentile partition lag in messages.",
            "lag_p99": "99th percentile partition lag in messages.",
            "lag_max": "Largest partition lag in messages.",
            "histogram": (
                "Log2 histogram of lag: [0] counts lag 0, [k] counts 2^(k-1) <= lag < 2^k."
            ),
            "time_lag_samples": "Samples with a time lag estimate.",
            "time_lag_extrapolated": (
                "Of those, estimates extrapolated past the oldest log-end point."
            ),
            "time_lag_p50_seconds": "Median time lag in seconds.",
            "time_lag_p90_seconds": "90th percentile time lag in seconds.",
            "time_lag_p99_seconds": "99th percentile time lag in seconds.",
            "time_lag_max_seconds": "Largest time lag in seconds.",
        },
    },
    "consumer_status": {
        "about": (
            "Burrow's evaluation rules (linkedin/Burrow caching.go @ced55ba) over each "
            "partition's windows of captured offsets: one row per partition and date."
        ),
        "columns": {
            **_GOLD_GROUP,
            **_TOPIC_PARTITION,
            "windows": "Windows rated that day (one per capture with a lag).",
            "status": f"{_BURROW} at the day's last rated capture.",
            "current_lag": "Lag at that capture, in messages.",
            "evaluated_at": "Time of that capture (UTC).",
            "worst_status": "Worst status of the partition that day.",
            "worst_status_at": "First capture (UTC) rated worst_status.",
            "non_ok_windows": "Windows rated other than OK.",
            "group_status": (
                "The group's status at the last capture: its worst partition's, capped at ERR."
            ),
            "group_worst_status": "The group's worst partition status that day, uncapped.",
            "current_offset": "Committed offset at the last rated capture.",
        },
    },
    "partition_flapping": {
        "about": (
            "Owner changes per partition over the group's events of the day, observed and per "
            "assignor."
        ),
        "columns": {
            **_GOLD_GROUP,
            **_TOPIC_PARTITION,
            "assignor": _ASSIGNOR["assignor"],
            "events": "The group's events that day.",
            "owner_changes": "Events whose owner differs from the partition's previous owner.",
            "distinct_owners": "Distinct members that owned the partition.",
            "unowned_events": "Events that left the partition without an owner.",
        },
    },
    "recommendations": {
        "about": (
            "Per group and date: the one change the group should make, compared with what it "
            "runs (the declared assignor's replay) over the same generations."
        ),
        "columns": {
            **_GOLD_GROUP,
            "declared_assignor": "Assignor the group declares (latest state capture of the day).",
            "recommended_assignor": "Assignor the group should run (the declared one for keep).",
            "compared_with": (
                "Baseline measured: the declared assignor's replay, or observed when it was not "
                "replayed."
            ),
            "events": "Events compared.",
            "declared_paused_partitions": "Paused partitions of the baseline over the day.",
            "recommended_paused_partitions": "Paused partitions of the recommended assignor.",
            "declared_max_count_spread": "Largest count spread of the baseline.",
            "recommended_max_count_spread": "Largest count spread of the recommended assignor.",
            "declared_mean_lag_skew": "Mean lag skew of the baseline.",
            "recommended_mean_lag_skew": "Mean lag skew of the recommended assignor.",
            "declared_stickiness": "Pooled stickiness of the baseline.",
            "recommended_stickiness": "Pooled stickiness of the recommended assignor.",
            "paused_partitions_delta": "recommended - declared paused partitions.",
            "max_count_spread_delta": "recommended - declared max count spread.",
            "mean_lag_skew_delta": "recommended - declared mean lag skew.",
            "stickiness_delta": "recommended - declared stickiness.",
            "reason": "One line saying why.",
            **_CHANGE_KIND,
            "protocol": "The group's protocol: classic or consumer (KIP-848).",
            **_SAVED,
        },
    },
    "rebalance_timeline": {
        "about": "One row per generation (or KIP-848 epoch) a coordinator log shows a group reach.",
        "columns": {
            **_GOLD_GROUP,
            "generation": "Generation or group epoch.",
            "protocol": "classic or consumer (KIP-848).",
            "started_at": "`Preparing to rebalance` or `Bumped group epoch` (UTC).",
            "stabilized_at": (
                "`Stabilized`, `Computed a new target assignment` or `... is now empty` "
                "(UTC); null when the log does not show its end."
            ),
            "duration_ms": "stabilized_at - started_at, in milliseconds.",
            "cause": "The logged reason, or (KIP-848) the epoch's member lines counted by event.",
            "members_before": "Members at the previous generation's end.",
            "members_after": "Members at this generation's end (0 when the group went empty).",
            "coordinator_broker": "Broker id of the coordinator that logged it.",
            "coordinator_partition": (
                "__consumer_offsets partition: abs(groupId.hashCode) % "
                "offsets.topic.num.partitions."
            ),
            "follow_up": (
                "True for a cooperative group's revocation round, part of the rebalance before it."
            ),
        },
    },
    "rebalance_causes": {
        "about": "One row per non-initial rebalance event, with its cause and the evidence.",
        "columns": {
            **_GOLD_GROUP,
            "event_seq": "The event's number in rebalance_events.",
            "event_at": "When the event happened (UTC).",
            "cause": (
                "deploy_restart, session_timeout, poll_timeout, scale_out, scale_in, "
                "subscription_changed, partitions_added, leader_rejoin, metadata_change or unknown."
            ),
            "evidence": "The log line or capture fact that decided the cause.",
            "generation": "Matched timeline generation; null when no log covers it.",
            "duration_ms": "The matched generation's duration in milliseconds; null when none.",
            "source": "logs, captures or both (see rebalance_events.source).",
        },
    },
    "ownership_audit": {
        "about": (
            "Per group, date, partition and finding: partitions two members own at one settled "
            "capture, and partitions with a committed offset, no owner and growing lag, with "
            "the captures that show it (metrics/ownership_rules.py)."
        ),
        "columns": {
            **_GOLD_GROUP,
            **_TOPIC_PARTITION,
            "finding": (
                "double_ownership (two or more members' captured assignments hold the partition "
                "at a capture not mid-rebalance) or orphaned (committed, lag known, owned in "
                "neither view at a settled capture of a group with members or Empty, lag "
                "higher at the last such capture than at the first)."
            ),
            "first_captured_at": "First capture of the day showing the finding (UTC).",
            "last_captured_at": "Last capture of the day showing it (UTC).",
            "captures": "Captures of the day showing it (2 or more for orphaned).",
            "members": (
                "Member ids holding the partition at those captures, sorted; null for orphaned."
            ),
            "first_lag": "Lag at first_captured_at, in messages; null for double_ownership.",
            "last_lag": (
                "Lag at last_captured_at, in messages (above first_lag); null for double_ownership."
            ),
            "group_state": "Group state at last_captured_at; null when not captured.",
        },
    },
    "log_end_quarantine": {
        "about": (
            "One row per offsets row of the day whose log end is kept out of the topic's "
            "shared time-lag points, as it contradicts the partition's other captures "
            "(metrics/log_end_checks.py); the row keeps its own offset lag."
        ),
        "columns": {
            **_GOLD_GROUP,
            **_TOPIC_PARTITION,
            "captured_at": "The reading's capture (UTC).",
            "log_end_offset": "The log-end offset refused.",
            "reason": (
                "Why: above a later capture's log end, below an earlier capture's, or above "
                "its capture's other readings by more than the partition's log end grew "
                "between two captures."
            ),
        },
    },
    "task_movements": {
        "about": (
            "One row per pair of consecutive captures of a streams group (KIP-1071) whose "
            "members or task owners changed: the tasks that moved (metrics/streams_tasks.py)."
        ),
        "columns": {
            **_GOLD_GROUP,
            "captured_at": "The later capture (UTC).",
            "previous_captured_at": (
                "The capture before it; for the date's first, the previous date's last."
            ),
            "members": "Members in the later capture.",
            "joined": "Member ids in the later capture only.",
            "left": "Member ids in the earlier capture only.",
            "active_tasks": "Active tasks held in the later capture.",
            "active_moved": "Active tasks held in both captures by different members.",
            "standby_tasks": "Standby tasks held in the later capture.",
            "standby_moved": "Standby tasks held in both captures by different members.",
            "tasks": (
                "Each active or standby task whose owners changed: kind, subtopology, "
                "partition, previous_owners and owners (empty where it was not held)."
            ),
        },
    },
    "group_health": {
        "about": (
            "One row per group and date: status, rebalances, cost and the top recommended "
            "change. The report and the summary read this table."
        ),
        "columns": {
            **_GOLD_GROUP,
            "protocol": (
                "classic or consumer (KIP-848) as its recommendation says; share or "
                "streams as its captures say (those get no recommendation)."
            ),
            "declared_assignor": "Assignor the group declares.",
            "last_status": f"Group {_BURROW} at the last capture, capped at ERR.",
            "worst_status": "Worst partition status of the day.",
            "partitions": "Partitions rated at the last capture.",
            "non_ok_partitions": "Of those, partitions not OK.",
            "rebalances": "Non-initial rebalance events (as rebalance_causes counts them).",
            "rebalances_by_cause": "rebalances per cause.",
            "generations_logged": (
                "Generations the coordinator logs show (rebalance_timeline rows)."
            ),
            "paused_partitions": (
                "Paused partitions of what the group runs (declared assignor's replay)."
            ),
            "paused_partition_seconds": "Their partition-seconds; null where no log times them.",
            "max_count_spread": "Largest partition-count spread observed.",
            "mean_lag_skew": "Mean lag skew observed.",
            "max_lag": "Largest partition lag in messages.",
            "max_time_lag_seconds": "Largest time lag in seconds.",
            "change_kind": _CHANGE_KIND["change_kind"],
            "recommended_assignor": "Assignor the group should run.",
            "prerequisites": _CHANGE_KIND["prerequisites"],
            **_SAVED,
            "change_reason": "One line saying why.",
            "severity": (
                "0 needs nothing; 1 needs attention; 2 Burrow WARN and 3 ERR at the last capture."
            ),
            "attention": "Why the group needs attention, in words.",
            "messages_delayed": "Messages delayed by the pauses; null where no log times them.",
            "epoch_bumps": (
                "KIP-848 group epoch bumps the coordinator logged that day (`Bumped group "
                "epoch to E`); null, as the five columns after it, for a group no capture "
                "shows a member epoch of (classic, or captured without `--verbose`)."
            ),
            "epochs_converged": (
                "Of those, the epochs every member reached in a capture before the next bump."
            ),
            "convergence_max_seconds": (
                "Longest time from a bump to the first capture showing it converged, in "
                "seconds (at most: the capture interval is the resolution); null when none "
                "converged."
            ),
            "convergence_median_seconds": (
                "Median of those times, in seconds; null when none converged."
            ),
            "members_stuck_reconciling": (
                "Members whose member epoch stayed behind their target epoch in consecutive "
                "captures spanning metrics.reconcile_stuck_s or more."
            ),
            "classic_members": (
                "Classic-protocol members inside the consumer group (members.upgraded false) "
                "at the day's last capture: a migration in progress."
            ),
        },
    },
    "cross_zone_traffic": {
        "about": (
            "One row per group with offsets captures of the date on a cluster with a broker "
            "zone known (share groups left out): "
            "the bytes it read between the date's first and last capture, how many of "
            "them crossed availability zones, and their cost (metrics/cross_zone_rules.py). "
            "A consumer's zone is its client.rack, else the zone of the longest "
            "zones.consumer_cidrs CIDR holding its host; a broker's its captured "
            "broker.rack, else zones.brokers. Bytes are the group's committed-offset growth "
            "times the partition's bytes per record from the growth of its leader's "
            "log-dir size (kafka-log-dirs.sh), else the topic's zones.record_bytes "
            "(estimated). What is not known is counted apart, never as 0. recommendations "
            "weighs the saving as the rack_aware change."
        ),
        "columns": {
            **_GOLD_GROUP,
            "read_bytes": (
                "Bytes the group read whose size is known: measured or estimated. Equals "
                "the known-zone bytes plus unknown_zone_bytes plus unowned_bytes."
            ),
            "estimated_bytes": (
                "Part of read_bytes from a configured record size (zones.record_bytes)."
            ),
            "read_records": "Records read: the committed offsets' growth, resets counted as 0.",
            "size_unknown_records": (
                "Records read whose bytes are unknown: no log-dir sizes captured and no "
                "record size configured for the topic."
            ),
            "cross_zone_leader_bytes": (
                "Bytes read from a leader in another zone than the reader's: what the group "
                "pays now, unless its consumers fetch from followers."
            ),
            "cross_zone_follower_bytes": (
                "Bytes that would still cross zones with follower fetching (KIP-392: "
                "client.rack set and the brokers' replica.selector.class "
                "RackAwareReplicaSelector): those with no in-sync replica in the reader's zone."
            ),
            "unknown_zone_bytes": (
                "Bytes whose reader's, leader's or an in-sync replica's zone is unknown."
            ),
            "unowned_bytes": "Bytes of partitions no member owned at the interval's start.",
            "partitions_read": "Partitions the group read records from.",
            "partitions_cross_zone_leader": (
                "Of those, partitions read across zones from the leader."
            ),
            "partitions_cross_zone_follower": (
                "Of those, partitions read across zones even with follower fetching."
            ),
            "members": "Members seen on the date (members view, or offsets CONSUMER-ID).",
            "members_unknown_zone": (
                "Of those, members with neither client.rack nor a matching CIDR."
            ),
            "offset_resets": "Intervals where the committed offset went back (read as 0 bytes).",
            "price_per_gb": "zones.price_per_gb the costs use, per 10^9 bytes.",
            "cross_zone_leader_cost": (
                "cross_zone_leader_bytes at price_per_gb, in the bill's currency."
            ),
            "cross_zone_follower_cost": (
                "cross_zone_follower_bytes at price_per_gb, in the bill's currency."
            ),
            "protocol": (
                "classic, consumer or streams (group_health's); null where no state or members "
                "capture of the date names it."
            ),
            "rack_aware_assignor": (
                "The rack-aware assignor (KIP-881, Kafka 3.5+ clients) the what-if replayed at "
                "every capture, each member's client.rack set to its zone: the declared one "
                "when it is range, sticky or cooperative-sticky, else cooperative-sticky; null "
                "for a consumer or streams group (the brokers' uniform and range ignore racks "
                "in 4.x: follower fetching is all it can use) or an unknown protocol."
            ),
            "rack_aware_cross_zone_bytes": (
                "Bytes that would cross zones under that assignor with follower fetching "
                "(KIP-881 matches any replica's zone, so it is deployed with KIP-392); with "
                "no assignor, cross_zone_follower_bytes."
            ),
            "rack_aware_saving_bytes": (
                "cross_zone_leader_bytes minus rack_aware_cross_zone_bytes: what client.rack, "
                "the brokers' RackAwareReplicaSelector and that assignor save a day. Negative "
                "where the assignor's balance (it comes before racks) moves reads across."
            ),
            "rack_aware_saving_cost": (
                "rack_aware_saving_bytes at price_per_gb. The four rack_aware columns are null "
                "where a member's zone is unknown: the replay could move reads to it."
            ),
            "members_client_rack": (
                "Of members, those whose zone is their captured client.rack: where all are, "
                "the rack_aware change tells only the brokers' part."
            ),
        },
    },
    "protocol_migration_plan": {
        "about": (
            "Fleet-wide, one row per classic-protocol group and date: what blocks its move to "
            "the consumer protocol (KIP-848), uniform's replayed effect against what it "
            "runs, its readiness and wave (metrics/migration_rules.py)."
        ),
        "columns": {
            **_GOLD_GROUP,
            "declared_assignor": (
                "Assignor the group declares (latest state capture of the day naming one); "
                "null when none did."
            ),
            "target_assignor": "Server-side assignor the group would run after the move: uniform.",
            "members": "Most members in one capture of the day; 0 when none was captured.",
            "static_members": "Distinct group.instance.ids captured that day.",
            "rebalances": "Non-initial rebalance events (group_health.rebalances).",
            "blockers": (
                "What stops the move: custom_assignor, streams_application, brokers_pre_4_0, "
                "assign_only; empty when nothing."
            ),
            "cautions": (
                "What to check first: static_membership, assignor_unknown; empty when none."
            ),
            "readiness": (
                "ready, ready_with_checks (cautions), blocked or not_applicable (assign_only)."
            ),
            "wave": (
                "1 ready and uniform pauses fewer partitions or partition-seconds; 2 ready "
                "with nothing to gain; 3 ready once its cautions are checked; null when "
                "blocked or not_applicable."
            ),
            "migration_order": (
                "Place in the date's fleet-wide order, 1 first: by wave, then "
                "partition-seconds saved, then partitions saved; null without a wave."
            ),
            "paused_partitions_now": (
                "Paused partitions over the day of what the group runs "
                "(group_health.paused_partitions)."
            ),
            "paused_partitions_uniform": (
                "Paused partitions of uniform's replay of the same events; null when not replayed."
            ),
            "paused_partitions_saved": (
                "paused_partitions_now - paused_partitions_uniform (negative: uniform pauses "
                "more); null when either is unknown."
            ),
            "paused_partition_seconds_now": (
                "Paused partition-seconds of what the group runs; null where no log times the "
                "rebalances."
            ),
            "paused_partition_seconds_uniform": "The same for uniform's replay.",
            "paused_partition_seconds_saved": (
                "paused_partition_seconds_now - paused_partition_seconds_uniform; null when "
                "either is unknown."
            ),
            "max_count_spread_now": (
                "Largest partition-count spread observed (group_health.max_count_spread)."
            ),
            "max_count_spread_uniform": "Largest count spread of uniform's replay.",
            "prerequisites": (
                "What clients and brokers need for the move, the same for every group (client "
                "versions are in no capture)."
            ),
            "reason": "Blockers, cautions and uniform's effect, in words.",
        },
    },
}

LAYERS: dict[str, dict[str, TableDoc]] = {
    "bronze": BRONZE,
    "silver": SILVER,
    "gold": GOLD,
}
TABLES: dict[str, TableDoc] = {
    name: doc for layer in LAYERS.values() for name, doc in layer.items()
}


def column_comments(table: str) -> dict[str, str]:
    """Each documented column of `table` and its description; {} for an unknown table."""
    doc = TABLES.get(table)
    return dict(doc["columns"]) if doc else {}
