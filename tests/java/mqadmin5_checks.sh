# tests/java/mqadmin5_checks.sh: the checks of RocketMQ 5's admin tool
# (rocketmq-tools 5.5.0) that only it has, sourced by run_mqadmin_test.sh 5
# after the checks both releases share, on the same cluster ($bk broker-a's
# master, $bkb broker-b's; $cp the tool's classpath with TopicAttrs): topic
# attributes (issue 32). updateTopic -a +message.type=FIFO creates a topic
# with RocketMQ 5's message.type attribute; RocketMQ 5's admin API
# (TopicAttrs.java: examineTopicConfig, GET_TOPIC_CONFIG 351, and
# getAllTopicConfig, 21; mqadmin's exportMetadata also asks
# GET_SYSTEM_TOPIC_LIST_FROM_BROKER 305) reads it back in the topic's
# "attributes" map; a change of the unchangeable queue.type is refused with
# RocketMQ's text; message.type changes to NORMAL and reads back so;
# topicRoute lists both masters. Then the 5.x batch commands,
# updateTopicList and updateSubGroupList (to broker-a), read back with
# topicRoute and getConsumerConfig, and topicList of the 5.x tool. System
# topics (issue 32): updateTopic and deleteTopic of
# RMQ_SYS_TRACE_TOPIC refused with RocketMQ's INVALID_PARAMETER text
# (deleteTopic stops before the name server); exportMetadata
# (GET_SYSTEM_TOPIC_LIST_FROM_BROKER 305) exports AttrTopic without the
# cluster's reply topic. Last, no broker logged an error. 15 TAP lines.

# read_back NAME: AttrTopic's attributes read by RocketMQ 5's admin API (TopicAttrs) into $run/NAME.out
read_back() {
  timeout 120 java -cp "$cp" rmqtest.TopicAttrs "$ns" "$bk" AttrTopic >"$run/$1.out" 2>"$run/$1.err"
  sed 's/^/# /' "$run/$1.out"
}

adm create updateTopic -c DefaultCluster -t AttrTopic -r 4 -w 4 -a +message.type=FIFO
ok "updateTopic -a +message.type=FIFO creates AttrTopic on both masters" \
  eval "has create '^create topic to $bk success\.$' && has create '^create topic to $bkb success\.$'"
read_back fifo
ok "GET_TOPIC_CONFIG and GET_ALL_TOPIC_CONFIG read message.type FIFO back" \
  eval "has fifo '^CONFIG \{message.type=FIFO\}$' && has fifo '^ALL \{message.type=FIFO\}$'"
adm unchangeable updateTopic -b "$bk" -t AttrTopic -r 4 -w 4 -a +queue.type=BatchCQ
ok "a change of queue.type is refused with RocketMQ's text" \
  grep -q 'attempt to update an unchangeable attribute. key: queue.type' "$run/unchangeable.out" "$run/unchangeable.err"
adm change updateTopic -b "$bk" -t AttrTopic -r 4 -w 4 -a +message.type=NORMAL
ok "updateTopic -a +message.type=NORMAL changes it" has change "^create topic to $bk success\.$"
read_back normal
ok "GET_TOPIC_CONFIG and GET_ALL_TOPIC_CONFIG read message.type NORMAL back" \
  eval "has normal '^CONFIG \{message.type=NORMAL\}$' && has normal '^ALL \{message.type=NORMAL\}$'"
adm route topicRoute -t AttrTopic
ok "topicRoute lists broker-a and broker-b for AttrTopic" \
  eval "has route '\"brokerName\" *: *\"broker-a\"' && has route '\"brokerName\" *: *\"broker-b\"'"

# the batch commands of RocketMQ 5's tool (UPDATE_AND_CREATE_TOPIC_LIST 18,
# UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST 225), from JSON files as it reads them
cat >"$run/topics.json" <<'JSON'
[{"topicName":"ListTopicA","readQueueNums":2,"writeQueueNums":2,"perm":6},
 {"topicName":"ListTopicB","readQueueNums":3,"writeQueueNums":3,"perm":6,"attributes":{"+message.type":"DELAY"}}]
JSON
adm topicList5 updateTopicList -b "$bk" -f "$run/topics.json"
ok "updateTopicList (18) submits both topics" \
  eval "has topicList5 '^submit batch of topic config to $bk success' && clean topicList5"
adm routeB topicRoute -t ListTopicB
ok "topicRoute of ListTopicB shows its 3 queues on broker-a, where the list went" \
  eval "has routeB '\"writeQueueNums\" *: *3' && has routeB '\"brokerName\" *: *\"broker-a\"'"
cat >"$run/groups.json" <<'JSON'
[{"groupName":"list_group_a","retryMaxTimes":3},{"groupName":"list_group_b","consumeBroadcastEnable":false}]
JSON
adm groupList5 updateSubGroupList -b "$bk" -f "$run/groups.json"
ok "updateSubGroupList (225) submits both groups" \
  eval "has groupList5 '^submit batch of group config to $bk success' && clean groupList5"
adm groupA getConsumerConfig -g list_group_a
ok "getConsumerConfig reads list_group_a back with retryMaxTimes 3" has groupA '^retryMaxTimes +=  3$'
adm topicList5b topicList
ok "topicList (5.x) holds AttrTopic, ListTopicA and ListTopicB" \
  eval "has topicList5b '^AttrTopic$' && has topicList5b '^ListTopicA$' && has topicList5b '^ListTopicB$'"

# system topics: RocketMQ's broker refuses an operator's change of them
conflict='The topic\[RMQ_SYS_TRACE_TOPIC\] is conflict with system topic\.'
adm sysUpdate updateTopic -b "$bk" -t RMQ_SYS_TRACE_TOPIC -r 4 -w 4
ok "updateTopic -t RMQ_SYS_TRACE_TOPIC is refused with RocketMQ's text" \
  eval "grep -q '$conflict' '$run/sysUpdate.out' '$run/sysUpdate.err' && ! has sysUpdate '^create topic to'"
adm sysDelete deleteTopic -c DefaultCluster -t RMQ_SYS_TRACE_TOPIC
ok "deleteTopic -t RMQ_SYS_TRACE_TOPIC is refused with RocketMQ's text, the name server left alone" \
  eval "grep -q '$conflict' '$run/sysDelete.out' '$run/sysDelete.err' && ! has sysDelete 'success'"
adm export exportMetadata -c DefaultCluster -t -f "$run/export"
sed 's/^/# topic.json: /' "$run/export/topic.json" 2>/dev/null | head -20
ok "exportMetadata (305) exports AttrTopic, not the cluster's reply topic" \
  eval "has export '^export .*topic.json success' && grep -q '\"AttrTopic\"' '$run/export/topic.json' &&
    ! grep -q 'DefaultCluster_REPLY_TOPIC' '$run/export/topic.json'"
broker_log_clean
