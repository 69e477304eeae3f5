#!/bin/bash
# tests/java/run_mqadmin5_test.sh: RocketMQ 5's own admin tool, unmodified
# (org.apache.rocketmq:rocketmq-tools 5.5.0 from Maven Central, class
# MQAdminStartup, Maven profile mqadmin5), against an rmq name server and
# broker on ephemeral loopback ports: topic attributes (issue 32).
# updateTopic -a +message.type=FIFO creates a topic with RocketMQ 5's
# message.type attribute; RocketMQ 5's admin API (TopicAttrs.java:
# examineTopicConfig, GET_TOPIC_CONFIG 351, and getAllTopicConfig, 21;
# mqadmin's exportMetadata would also ask GET_SYSTEM_TOPIC_LIST_FROM_BROKER
# 305, not served) reads it back in the topic's "attributes" map; a change
# of the unchangeable queue.type is refused with RocketMQ's text;
# message.type changes to NORMAL and reads back so; topicRoute lists the
# broker. Prints TAP;
# SKIP when java or mvn is missing or Maven Central cannot be reached.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

echo "1..7"
java_build 7 "$here" mqadmin5
start_namesrv
start_broker AttrCluster broker-m
bk=127.0.0.1:$bk_port

mqadmin_home

# read_back NAME: AttrTopic's attributes read by RocketMQ 5's admin API (TopicAttrs) into $run/NAME.out
read_back() {
  timeout 120 java -cp "$cp" rmqtest.TopicAttrs "$ns" "$bk" AttrTopic >"$run/$1.out" 2>"$run/$1.err"
  sed 's/^/# /' "$run/$1.out"
}

adm create updateTopic -c AttrCluster -t AttrTopic -r 4 -w 4 -a +message.type=FIFO
ok "updateTopic -a +message.type=FIFO creates AttrTopic" has create "^create topic to $bk success\.$"
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
ok "topicRoute lists broker-m for AttrTopic" has route '"brokerName" *: *"broker-m"'
broker_log_clean
