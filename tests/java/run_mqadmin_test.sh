#!/bin/bash
# tests/java/run_mqadmin_test.sh [4|5]: RocketMQ's own admin tool,
# unmodified (org.apache.rocketmq:rocketmq-tools 4.9.7 from Maven Central,
# class MQAdminStartup; with "5", 5.5.0's), against the 2-master/2-slave
# SYNC cluster of deploy/cluster.sh up sync (issue 32; ports moved by
# cluster_port_offset). Creates a topic on both masters (4 queues each) and
# a subscription group, lets AdminFixture.java (the 4.9.7 client) send 8
# messages with a key (one a queue) and consume them with a push consumer
# that stays connected, then runs clusterList, topicList, topicRoute,
# topicStatus, brokerStatus, consumerProgress, brokerConsumeStats, statsAll
# (the broker's stats items), consumerConnection, producerConnection,
# consumerStatus (the broker asks the live consumer,
# GET_CONSUMER_RUNNING_INFO 307), cloneGroupOffset, queryMsgById (also
# consumed directly by the live consumer, CONSUME_MESSAGE_DIRECTLY 309),
# queryMsgByKey, getConsumerConfig, getBrokerConfig, updateBrokerConfig,
# resetOffsetByTime (to a time before the sends: the live consumer gets the
# messages again; and once it left: the tool's fallback),
# skipAccumulatedMessage and deleteTopic and checks what each printed; with
# "5", then the checks only 5.x's tool has (mqadmin5_checks.sh). Prints TAP; SKIP when java or mvn is missing or Maven Central cannot be
# reached.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

# the tool's release: 4 (4.9.7) or 5 (5.5.0, Maven profile mqadmin5); the
# fixture's clients are 4.9.7's either way
tool=${1:-4}
plan=$([ "$tool" = 4 ] && echo 35 || echo 50)   # 5: mqadmin5_checks.sh's too
echo "1..$plan"
java_build "$plan"
fixture_cp=$cp
[ "$tool" = 4 ] || java_build "$plan" "$here" mqadmin5
# where the releases print or ask differently: 5.x's queryMsgById needs the
# topic, and its totals and reset headings read otherwise
if [ "$tool" = 4 ]; then
  by_id_topic=() diff_total='Diff Total' reset_heading='rollback consumer offset by specified group'
else
  by_id_topic=(-t AdmTopic) diff_total='Consume Diff Total' reset_heading='start reset consumer offset by specified, group'
fi
script=mqadmin$([ "$tool" = 4 ] || echo "$tool")
start_cluster_sync "$script" ''
bk=$(cluster_addr broker-a) bkb=$(cluster_addr broker-b) bka_s=$(cluster_addr broker-a-s)

mqadmin_home

adm updateTopic updateTopic -c DefaultCluster -t AdmTopic -r 4 -w 4
ok "updateTopic creates AdmTopic on both masters" \
  eval "has updateTopic '^create topic to $bk success\.$' && has updateTopic '^create topic to $bkb success\.$'"
adm updateSubGroup updateSubGroup -c DefaultCluster -g adm_group -r 5
ok "updateSubGroup creates adm_group on both masters" \
  eval "has updateSubGroup '^create subscription group to $bk success\.$' && \
        has updateSubGroup '^create subscription group to $bkb success\.$' && clean updateSubGroup"

t0=$(date +%s%3N)   # before the first send
timeout 480 java -cp "$fixture_cp" rmqtest.AdminFixture "$ns" AdmTopic adm_group 8 "$run/stop" \
  >"$run/fixture.out" 2>"$run/fixture.err" &
fixture=$!
pids+=("$fixture")
for _ in $(seq 1 600); do grep -q '^CONSUMED' "$run/fixture.out" && break; sleep 0.2; done
sleep 3   # the consumer commits its offsets every second
ok "the Java client sent 8 messages and consumed them" grep -qx 'CONSUMED 8' "$run/fixture.out"
read -r _ msgid _ _ < <(grep -m1 '^SENT' "$run/fixture.out")

# caught_up: brokerConsumeStats of broker-a shows adm_group at the end of
# its 4 queues of AdmTopic, a message each (before the consumer's first offset commit it lists no queue at
# all, and its Diff Total is 0 too)
caught_up() {
  [ "$(count brokerConsumeStats '^AdmTopic +adm_group +broker-a +[0-3] +1 +1 +0 +[0-9]{4}-')" -eq 4 ] &&
    has brokerConsumeStats '^Diff Total: 0$'
}
for _ in 1 2 3 4 5 6 7 8; do   # until the consumer's periodic offset commit reached the broker
  adm brokerConsumeStats brokerConsumeStats -b "$bk"
  caught_up && break
  sleep 2
done
ok "brokerConsumeStats (GET_BROKER_CONSUME_STATS, 317) shows adm_group caught up on broker-a's 4 queues" \
  eval "caught_up && clean brokerConsumeStats"
sleep 8   # the broker samples its stats items every 10 s; the minute window spans the last 60 s
adm statsAll statsAll -t AdmTopic
ok "statsAll (VIEW_BROKER_STATS_DATA, 315), summed over both masters: AdmTopic got 8 messages and adm_group took 8, none left" \
  eval "has statsAll '^AdmTopic +adm_group +0 +[0-9]+\.[0-9]{2} +[0-9]+\.[0-9]{2} +8 +8$' && clean statsAll"
ok "statsAll's rates are those of 8 messages over the sampled minute" \
  awk '/^AdmTopic/ { ok = $4 > 0 && $4 <= 8 && $5 > 0 && $5 <= 8 } END { exit !ok }' "$run/statsAll.out"

adm clusterList clusterList
ok "clusterList lists DefaultCluster's masters and slaves with their addresses and versions" \
  eval "has clusterList '^DefaultCluster +broker-a +0 +$bk +rmq ' && has clusterList '^DefaultCluster +broker-a +1 +$bka_s +rmq ' && \
        has clusterList '^DefaultCluster +broker-b +0 +$bkb +rmq ' && [ \$(count clusterList '^DefaultCluster +broker-') -eq 4 ]"
ok "clusterList has every figure it reads (no null)" eval "! grep -q null '$run/clusterList.out'"

adm topicList topicList
ok "topicList holds AdmTopic and the group's retry topic" \
  eval "has topicList '^AdmTopic$' && has topicList '^%RETRY%adm_group$'"
adm topicListC topicList -c
ok "topicList -c names AdmTopic's cluster and its consumer group" \
  has topicListC '^DefaultCluster +AdmTopic +adm_group'

adm topicRoute topicRoute -t AdmTopic
ok "topicRoute shows broker-a and broker-b with 4 read and 4 write queues" \
  eval "[ \$(grep -o '\"readQueueNums\":4' '$run/topicRoute.out' | wc -l) -eq 2 ] && \
        [ \$(grep -o '\"writeQueueNums\":4' '$run/topicRoute.out' | wc -l) -eq 2 ] && \
        has topicRoute '\"brokerName\":\"broker-a\"' && has topicRoute '\"brokerName\":\"broker-b\"'"

adm topicStatus topicStatus -t AdmTopic
ok "topicStatus lists the 8 queues of broker-a and broker-b holding 8 messages" \
  eval "[ \$(count topicStatus '^broker-[ab] +[0-3] +0 +[0-9]+ +20') -eq 8 ] && \
        [ \$(awk '/^broker-[ab]/{s+=\$4} END{print s}' '$run/topicStatus.out') -eq 8 ]"

adm brokerStatus brokerStatus -b "$bk"
ok "brokerStatus prints broker-a's runtime keys" \
  eval "has brokerStatus '^brokerAddr +: $bk$' && has brokerStatus '^msgPutTotalTodayNow +: 4$' && \
        has brokerStatus '^brokerRole +: SYNC_MASTER$'"

adm consumerProgress consumerProgress -g adm_group
ok "consumerProgress shows adm_group caught up on AdmTopic's 8 queues" \
  eval "[ \$(count consumerProgress '^AdmTopic +broker-[ab] +[0-3] +1 +1 +0 ') -eq 8 ] && \
        has consumerProgress '^$diff_total: 0$'"
adm consumerProgressAll consumerProgress
ok "consumerProgress without a group lists adm_group: 1 push consumer, clustering" \
  has consumerProgressAll '^adm_group +1 +V4_9_7 +PUSH +CLUSTERING '

adm consumerConnection consumerConnection -g adm_group
ok "consumerConnection lists the Java consumer, its address, language and version" \
  has consumerConnection '^[^ ]+@admin-consumer +127\.0\.0\.1:[0-9]+ +JAVA +V4_9_7$'
ok "consumerConnection shows its subscription and settings" \
  eval "has consumerConnection '^AdmTopic +TagA \|\| TagB$' && \
        has consumerConnection '^ConsumeType: CONSUME_PASSIVELY$' && \
        has consumerConnection '^MessageModel: CLUSTERING$' && \
        has consumerConnection '^ConsumeFromWhere: CONSUME_FROM_FIRST_OFFSET$'"

adm producerConnection producerConnection -g rmq_admin_producer -t AdmTopic
ok "producerConnection (GET_PRODUCER_CONNECTION_LIST, 204) lists the Java producer, its address, language and version" \
  has producerConnection '^0001 +[^ ]+@admin-producer +127\.0\.0\.1:[0-9]+ +JAVA +V4_9_7$'

client=$(awk '/@admin-consumer /{print $1; exit}' "$run/consumerConnection.out")
adm consumerStatus consumerStatus -g adm_group
ok "consumerStatus (GET_CONSUMER_RUNNING_INFO, 307, put to the live consumer) finds its subscription and rebalance" \
  eval "has consumerStatus '^1 +$client +V4_9_7 ' && has consumerStatus 'Same subscription in the same group of consumer' && \
        has consumerStatus 'Rebalance OK' && clean consumerStatus"
adm consumerStatusI consumerStatus -g adm_group -i "$client"
ok "consumerStatus -i prints the consumer's own running info: its group, settings and subscription" \
  eval "has consumerStatusI '^consumerGroup +: adm_group$' && has consumerStatusI '^messageModel +: CLUSTERING$' && \
        has consumerStatusI '^#Consumer Subscription#' && \
        has consumerStatusI '^[0-9]{3} Topic: AdmTopic +ClassFilter: false +SubExpression: TagA \|\| TagB$' && \
        clean consumerStatusI"

# brokerConsumeStats lists subscription groups only (RocketMQ's too): adm_clone is made one first
adm updateSubGroupClone updateSubGroup -c DefaultCluster -g adm_clone
adm cloneGroupOffset cloneGroupOffset -s adm_group -d adm_clone -t AdmTopic -o false
ok "cloneGroupOffset (CLONE_GROUP_OFFSET, 314) copies adm_group's offsets to adm_clone" \
  eval "has cloneGroupOffset '^clone group offset success\. srcGroup\[adm_group\], destGroup=\[adm_clone\], topic\[AdmTopic\]' && \
        clean cloneGroupOffset"
adm brokerConsumeStatsClone brokerConsumeStats -b "$bk"
ok "brokerConsumeStats shows adm_clone at adm_group's offsets on broker-a's 4 queues" \
  eval "[ \$(count brokerConsumeStatsClone '^AdmTopic +adm_clone +broker-a +[0-3] +1 +1 +0 ') -eq 4 ]"

adm queryMsgById queryMsgById -i "$msgid" "${by_id_topic[@]}"
ok "queryMsgById finds the first message by its offset msgId" \
  eval "has queryMsgById '^OffsetID: +$msgid$' && has queryMsgById '^Topic: +AdmTopic$' && \
        has queryMsgById '^Keys: +\[adminkey\]$' && has queryMsgById '^Store Host: +($bk|$bkb)$'"
ok "queryMsgById tracks it as consumed by adm_group" \
  has queryMsgById 'consumerGroup=adm_group, trackType=CONSUMED'
adm consumeDirectly queryMsgById -i "$msgid" "${by_id_topic[@]}" -g adm_group -d "$client"
ok "queryMsgById -g -d: the live consumer consumes it directly (CONSUME_MESSAGE_DIRECTLY, 309)" \
  eval "has consumeDirectly 'consumeResult=CR_SUCCESS' && clean consumeDirectly"

adm queryMsgByKey queryMsgByKey -t AdmTopic -k adminkey
ok "queryMsgByKey finds the 8 messages of key adminkey" \
  eval "[ \$(count queryMsgByKey '^[0-9A-F]{32,} +[0-3] +[0-9]+( |$)') -eq 8 ]"

adm getConsumerConfig getConsumerConfig -g adm_group
ok "getConsumerConfig reads adm_group back with retryMaxTimes 5" \
  eval "has getConsumerConfig '^groupName +=  adm_group$' && has getConsumerConfig '^retryMaxTimes +=  5$'"

adm getBrokerConfig getBrokerConfig -b "$bk"
ok "getBrokerConfig prints broker-a's properties" \
  eval "has getBrokerConfig '^brokerName +=  broker-a$' && has getBrokerConfig '^brokerClusterName +=  DefaultCluster$'"

adm updateBrokerConfig updateBrokerConfig -b "$bk" -k flushIntervalCommitLog -v 1000
ok "updateBrokerConfig is refused with a reason" \
  grep -q 'CODE: 3 .*UPDATE_BROKER_CONFIG (25) is not supported' "$run/updateBrokerConfig.err"

# got: how many deliveries the fixture's consumer printed so far
got() { grep -c '^GOT ' "$run/fixture.out"; }
before=$(got)
adm resetOffsetByTime resetOffsetByTime -g adm_group -t AdmTopic -s "$t0"
ok "resetOffsetByTime (INVOKE_BROKER_TO_RESET_OFFSET, 222) moves adm_group to 0 on AdmTopic's 8 queues" \
  eval "has resetOffsetByTime '^$reset_heading\[adm_group\]' && \
        [ \$(count resetOffsetByTime '^broker-[ab] +[0-3] +0 *$') -eq 8 ] && clean resetOffsetByTime"
for _ in $(seq 1 300); do [ $(($(got) - before)) -ge 8 ] && break; sleep 0.2; done   # the client waits 10 s
ok "the live consumer, told by RESET_CONSUMER_CLIENT_OFFSET (220), gets the 8 messages again" \
  eval "[ \$(grep '^GOT ' '$run/fixture.out' | tail -n +\$((before + 1)) | sort -u | wc -l) -eq 8 ]"
sleep 3   # the consumer commits its offsets every second

# its table is INVOKE_BROKER_TO_RESET_OFFSET's (broker, queue, offset), or,
# should a master not see the consumer at that moment (CONSUMER_NOT_ONLINE,
# seen once with the fixture's JVM starved at load 12), the tool's own
# reset's (broker, queue, broker, consumer, timestamp and reset offsets)
adm skipAccumulatedMessage skipAccumulatedMessage -g adm_group -t AdmTopic
ok "skipAccumulatedMessage moves adm_group to the end (1) of AdmTopic's 8 queues" \
  eval "[ \$(count skipAccumulatedMessage '^broker-[ab] +[0-3] +1( +1 +1 +1)? *$') -eq 8 ] && clean skipAccumulatedMessage"

touch "$run/stop"
wait "$fixture"
adm resetOffsetOffline resetOffsetByTime -g adm_group -t AdmTopic -s "$t0"
ok "resetOffsetByTime with no live consumer: CONSUMER_NOT_ONLINE (206), the tool resets by itself" \
  eval "[ \$(count resetOffsetOffline '^broker-[ab] +[0-3] +1 +1 +0 +0 *$') -eq 8 ] && clean resetOffsetOffline"
adm deleteTopic deleteTopic -c DefaultCluster -t AdmTopic
ok "deleteTopic deletes AdmTopic on both masters" \
  has deleteTopic '^delete topic \[AdmTopic\] from cluster \[DefaultCluster\] success\.$'
ok "deleteTopic deletes AdmTopic on the name server (DELETE_TOPIC_IN_NAMESRV, 216)" \
  has deleteTopic '^delete topic \[AdmTopic\] from NameServer success\.$'
[ "$tool" = 4 ] || . "$here/mqadmin5_checks.sh"
