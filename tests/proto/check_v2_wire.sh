#!/bin/bash
# check_v2_wire.sh: our apache.rocketmq.v2 protos against apache/rocketmq-apis,
# read from the file descriptors the rocketmq-proto jar on Maven Central
# embeds (v2_descriptor_dump/, built and cached by tests/java/java_lib.sh's
# java_build), or from a checkout named by RMQ_APIS_DIR when set:
#  1. the descriptors: every message, field, enum value and method of ours
#     has upstream's number, label, type, type name and oneof (from the jar,
#     the few of ours newer than its release may be absent:
#     v2_newer_than_release.txt);
#  2. bytes our generated code packs (a delivered Message, a Settings
#     reply) decode with upstream's definitions (protoc --decode) to the
#     values we put in;
#  3. a SendMessageRequest protoc encodes from upstream's definitions maps,
#     through our decoder and gr_message_to_store, to the stored properties
#     expected.
# Skips (a TAP "1..0 # SKIP") without protoc, java or mvn, or when Maven
# Central cannot be reached; with CI=true each of those fails instead.
# Usage: check_v2_wire.sh SOURCE_ROOT V2_WIRE_SAMPLE_BINARY
set -euo pipefail
src=$1
sample=$2
apis=${RMQ_APIS_DIR:-}
# shellcheck source=../java/java_lib.sh
. "$src/tests/java/java_lib.sh"

# skip_all PLAN REASON (replacing java_lib.sh's, which java_build calls): the
# check cannot run; a skip, or a failure with CI=true.
skip_all() {
  if [ "${CI:-}" = true ]; then
    printf '1..1\nnot ok 1 - cannot run with CI=true: %s\n' "$2"
    exit 1
  fi
  echo "1..0 # SKIP $2"
  exit 0
}
command -v protoc >/dev/null || skip_all 1 "protoc is not installed"
inc=$(pkg-config --variable=includedir protobuf)
upstream=$run/upstream.pb
newer=()
if [ -n "$apis" ]; then
  [ -f "$apis/apache/rocketmq/v2/service.proto" ] || skip_all 1 "RMQ_APIS_DIR=$apis is no apache/rocketmq-apis checkout"
  protoc -I"$apis" -I"$inc" --include_imports --descriptor_set_out="$upstream" apache/rocketmq/v2/service.proto \
    apache/rocketmq/v2/definition.proto
else
  java_build 1 "$src/tests/proto/v2_descriptor_dump"
  java -cp "$cp" rmqtest.DumpV2Descriptors "$upstream"
  newer=(--newer "$src/tests/proto/v2_newer_than_release.txt")
fi
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); fail=1; echo "not ok $n - $1"; }
# expect FILE TEXT...: each TEXT is a line of FILE (after trimming).
expect() {
  local file=$1 what
  shift
  for what in "$@"; do
    if sed 's/^ *//' "$file" | grep -qxF -- "$what"; then ok "$what"; else not_ok "$what"; fi
  done
}
# text_descriptors: a FileDescriptorSet on stdin in protoc's text form
text_descriptors() {
  protoc -I"$inc" --decode=google.protobuf.FileDescriptorSet google/protobuf/descriptor.proto
}
up_decode() {
  protoc --descriptor_set_in="$upstream" --decode="apache.rocketmq.v2.$1" apache/rocketmq/v2/service.proto
}

protoc -I"$src/proto" -I"$inc" --descriptor_set_out="$run/ours.pb" apache/rocketmq/v2/service.proto \
  apache/rocketmq/v2/definition.proto
text_descriptors <"$run/ours.pb" >"$run/ours.txt"
text_descriptors <"$upstream" >"$run/upstream.txt"
if python3 "$src/tests/proto/v2_descriptors.py" "${newer[@]}" "$run/ours.txt" "$run/upstream.txt" >"$run/cmp.txt"; then
  ok "descriptors: $(tail -n 1 "$run/cmp.txt")"
else
  grep MISMATCH "$run/cmp.txt" | sed 's/^/# /'
  not_ok "descriptors match upstream"
fi

"$sample" encode message | up_decode Message >"$run/message.txt"
expect "$run/message.txt" 'name: "TopicA"' 'key: "color"' 'value: "red"' 'tag: "TagA"' 'keys: "k1"' 'keys: "k2"' \
  'message_id: "01A1B2C3D4E5F60708090A0B0C0D0E0F10"' 'checksum: "900150983CD24FB0D6963F7D28E17F72"' \
  'message_type: FIFO' 'message_group: "g1"' 'born_host: "10.0.0.1"' 'store_host: "10.0.0.9:10911"' \
  'receipt_handle: "handle-1"' 'queue_id: 2' 'queue_offset: 41' 'delivery_attempt: 3' 'body_encoding: IDENTITY' \
  'seconds: 1767000000' 'nanos: 123000000' 'body: "abc"'

"$sample" encode settings | up_decode TelemetryCommand >"$run/settings.txt"
expect "$run/settings.txt" 'code: OK' 'client_type: PRODUCER' 'max_attempts: 3' 'exponential_backoff {' \
  'multiplier: 2' 'max_body_size: 4194304' 'name: "TopicA"'

cat >"$run/send.txt" <<'MSG'
messages {
  topic { name: "TopicS" }
  user_properties { key: "color" value: "green" }
  system_properties {
    tag: "TagS"
    keys: "a" keys: "b"
    message_id: "01FFEEDDCCBBAA99887766554433221100"
    message_type: TRANSACTION
    born_timestamp { seconds: 1767000000 nanos: 5000000 }
    born_host: "producer-1"
    queue_id: 1
    message_group: "grp"
    trace_context: "tc"
    orphaned_transaction_recovery_duration { seconds: 20 }
  }
  body: "payload"
}
MSG
protoc --descriptor_set_in="$upstream" --encode=apache.rocketmq.v2.SendMessageRequest apache/rocketmq/v2/service.proto \
  <"$run/send.txt" | "$sample" decode send >"$run/stored.txt"
expect "$run/stored.txt" 'topic=TopicS' 'queue_id=1' 'sys_flag=4' 'born_timestamp=1767000000005' 'body=payload' \
  'color=green' 'TAGS=TagS' 'KEYS=a b' 'UNIQ_KEY=01FFEEDDCCBBAA99887766554433221100' '__SHARDINGKEY=grp' \
  'TRAN_MSG=true' 'PGROUP=TopicS' 'CHECK_IMMUNITY_TIME_IN_SECONDS=20' 'TRACE_CONTEXT=tc' \
  '__BORNHOST=producer-1' 'BORN_TIMESTAMP=1767000000005'
echo "1..$n"
exit $fail
