#!/bin/bash
# check_v2_wire.sh: our apache.rocketmq.v2 protos against apache/rocketmq-apis
# (a checkout named by RMQ_APIS_DIR; its files are not part of rmq):
#  1. the descriptors: every message, field, enum value and method of ours
#     has upstream's number, label, type, type name and oneof;
#  2. bytes our generated code packs (a delivered Message, a Settings
#     reply) decode with upstream's .proto (protoc --decode) to the values
#     we put in;
#  3. a SendMessageRequest protoc encodes from upstream's .proto maps, through
#     our decoder and gr_message_to_store, to the stored properties expected.
# Skips (a TAP "1..0 # SKIP") without RMQ_APIS_DIR or protoc.
# Usage: check_v2_wire.sh SOURCE_ROOT V2_WIRE_SAMPLE_BINARY
set -euo pipefail
src=$1
sample=$2
apis=${RMQ_APIS_DIR:-}
if [ -z "$apis" ] || [ ! -f "$apis/apache/rocketmq/v2/service.proto" ] || ! command -v protoc >/dev/null; then
  echo "1..0 # SKIP set RMQ_APIS_DIR to an apache/rocketmq-apis checkout (and install protoc)"
  exit 0
fi
inc=$(pkg-config --variable=includedir protobuf)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
descriptors() {
  protoc -I"$1" -I"$inc" --descriptor_set_out="$tmp/d.pb" apache/rocketmq/v2/service.proto \
    apache/rocketmq/v2/definition.proto
  protoc -I"$inc" --decode=google.protobuf.FileDescriptorSet google/protobuf/descriptor.proto <"$tmp/d.pb"
}
up_decode() {
  protoc -I"$apis" -I"$inc" --decode="apache.rocketmq.v2.$1" apache/rocketmq/v2/service.proto
}

descriptors "$src/proto" >"$tmp/ours.txt"
descriptors "$apis" >"$tmp/upstream.txt"
if python3 "$src/tests/proto/v2_descriptors.py" "$tmp/ours.txt" "$tmp/upstream.txt" >"$tmp/cmp.txt"; then
  ok "descriptors: $(tail -n 1 "$tmp/cmp.txt")"
else
  grep MISMATCH "$tmp/cmp.txt" | sed 's/^/# /'
  not_ok "descriptors match upstream"
fi

"$sample" encode message | up_decode Message >"$tmp/message.txt"
expect "$tmp/message.txt" 'name: "TopicA"' 'key: "color"' 'value: "red"' 'tag: "TagA"' 'keys: "k1"' 'keys: "k2"' \
  'message_id: "01A1B2C3D4E5F60708090A0B0C0D0E0F10"' 'checksum: "900150983CD24FB0D6963F7D28E17F72"' \
  'message_type: FIFO' 'message_group: "g1"' 'born_host: "10.0.0.1"' 'store_host: "10.0.0.9:10911"' \
  'receipt_handle: "handle-1"' 'queue_id: 2' 'queue_offset: 41' 'delivery_attempt: 3' 'body_encoding: IDENTITY' \
  'seconds: 1767000000' 'nanos: 123000000' 'body: "abc"'

"$sample" encode settings | up_decode TelemetryCommand >"$tmp/settings.txt"
expect "$tmp/settings.txt" 'code: OK' 'client_type: PRODUCER' 'max_attempts: 3' 'exponential_backoff {' \
  'multiplier: 2' 'max_body_size: 4194304' 'name: "TopicA"'

cat >"$tmp/send.txt" <<'MSG'
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
protoc -I"$apis" -I"$inc" --encode=apache.rocketmq.v2.SendMessageRequest apache/rocketmq/v2/service.proto \
  <"$tmp/send.txt" | "$sample" decode send >"$tmp/stored.txt"
expect "$tmp/stored.txt" 'topic=TopicS' 'queue_id=1' 'sys_flag=4' 'born_timestamp=1767000000005' 'body=payload' \
  'color=green' 'TAGS=TagS' 'KEYS=a b' 'UNIQ_KEY=01FFEEDDCCBBAA99887766554433221100' '__SHARDINGKEY=grp' \
  'TRAN_MSG=true' 'PGROUP=TopicS' 'CHECK_IMMUNITY_TIME_IN_SECONDS=20' 'TRACE_CONTEXT=tc' \
  '__BORNHOST=producer-1' 'BORN_TIMESTAMP=1767000000005'
echo "1..$n"
exit $fail
