#!/bin/bash
# tests/java/run_tx_retry_test.sh: the unmodified Apache RocketMQ Java
# client (4.9.x, Maven Central) against an rmq broker over remoting
# (TxRetry.java): a TransactionMQProducer whose local transactions commit,
# roll back or stay UNKNOW, the unknown ones decided by the broker's
# check-back (CHECK_TRANSACTION_STATE, answered by END_TRANSACTION); delay
# level 2 (5 s); a push consumer that always answers RECONSUME_LATER with
# maxReconsumeTimes 2: each message is redelivered through %RETRY%group at
# delay levels 3 and 4 (10 s, 30 s), then lands in %DLQ%group, read by a
# consumer of that topic. Prints TAP; SKIP without java, mvn or Maven Central.
set -uo pipefail
# shellcheck source=tests/java/java_lib.sh
. "$(dirname "$0")/java_lib.sh"

plan=13
echo "1..$plan"
java_build $plan
start_namesrv
broker_extra=$'transactionTimeOut=2000\ntransactionCheckInterval=1000'
start_broker JavaCluster broker-t
for t in JavaTx JavaDelay JavaRetry; do create_topic JavaCluster "$t"; done

n=0
result() {
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi
}
# java_run OUT ARGS...: one scenario of TxRetry
java_run() {
  local out=$1
  shift
  timeout 300 java -Drocketmq.client.rebalance.waitInterval=1000 -cp "$cp" rmqtest.TxRetry "$@" \
    >"$out" 2>"$out.err"
  local rc=$?
  [ "$rc" -eq 0 ] || { echo "# java $1 exited $rc"; tail -30 "$out.err" | sed 's/^/# /'; }
  return "$rc"
}
# ids FILE TAG KIND...: sorted distinct ids of TAG lines whose last field is one of KIND
ids() {
  local f=$1 tag=$2
  shift 2
  awk -v tag="$tag" -v kinds=" $* " '$1 == tag && index(kinds, " " $NF " ") { print $2 }' "$f" | sort -u
}

# ---- transactions with check-back
java_run "$run/tx" tx "$ns" JavaTx 40 90
grep '^DONE' "$run/tx" | sed 's/^/# /'
[ "$(awk '$1 == "TXSENT" && $3 == "SEND_OK"' "$run/tx" | wc -l)" -eq 40 ]
result $? "40 transactional sends SEND_OK"
ids "$run/tx" TXSENT check-commit check-rollback >"$run/tx.unknown"
ids "$run/tx" CHECK check-commit check-rollback >"$run/tx.checked"
echo "# unknown $(wc -l <"$run/tx.unknown"), checked back $(wc -l <"$run/tx.checked")"
[ "$(wc -l <"$run/tx.unknown")" -eq 20 ] && cmp -s "$run/tx.unknown" "$run/tx.checked"
result $? "every UNKNOW message was checked back (CHECK_TRANSACTION_STATE)"
[ "$(awk '$1 == "CHECK" && $3 != "JavaTx"' "$run/tx" | wc -l)" -eq 0 ]
result $? "the checked message carries its real topic"
[ "$(ids "$run/tx" CHECK commit rollback | wc -l)" -eq 0 ]
result $? "no check-back for a message whose outcome the producer sent"
ids "$run/tx" TXSENT commit check-commit >"$run/tx.commit"
ids "$run/tx" RECV commit check-commit check-rollback rollback >"$run/tx.recv"
echo "# committed $(wc -l <"$run/tx.commit"), received $(wc -l <"$run/tx.recv")"
comm -3 "$run/tx.commit" "$run/tx.recv" | head -5 | sed 's/^/# differs: /'
[ "$(wc -l <"$run/tx.commit")" -eq 20 ] && cmp -s "$run/tx.commit" "$run/tx.recv"
result $? "every committed message (at once or by check-back) consumed, ids equal"
[ "$(ids "$run/tx" RECV rollback check-rollback | wc -l)" -eq 0 ]
result $? "no rolled-back message consumed"

# ---- delay levels
java_run "$run/delay" delay "$ns" JavaDelay
sed -n 's/^DELAY /# delivered after ms: /p' "$run/delay"
lvl2=$(awk '$1 == "DELAY" && $2 == "level2" { print $3 }' "$run/delay")
none=$(awk '$1 == "DELAY" && $2 == "none" { print $3 }' "$run/delay")
[ -n "$lvl2" ] && [ "$lvl2" -ge 4500 ] && [ "$lvl2" -lt 30000 ]
result $? "a message at delay level 2 (5 s) consumed after ${lvl2:-never} ms"
[ -n "$none" ] && [ "$none" -lt 4500 ]
result $? "the undelayed one consumed after ${none:-never} ms"

# ---- retry, then dead letters
java_run "$run/retry" retry "$ns" JavaRetry rmq_java_retry_group 3 180
grep '^DONE' "$run/retry" | sed 's/^/# /'
awk '$1 == "SENT" { print $2 }' "$run/retry" | sort -u >"$run/retry.sent"
awk '$1 == "ATTEMPT" { print $2, $3 }' "$run/retry" | sort -u >"$run/retry.attempts"
expect=$(awk '{ for (t = 0; t < 3; t++) print $1, t }' "$run/retry.sent" | sort)
[ "$(wc -l <"$run/retry.sent")" -eq 3 ] && [ "$(cat "$run/retry.attempts")" = "$expect" ]
result $? "each failed message delivered with reconsumeTimes 0, 1, 2 and no more"
# gaps: per message, the first delivery time of each reconsumeTimes
gaps=$(awk '$1 == "ATTEMPT" && !(($2, $3) in t) { t[$2, $3] = $4; id[$2] = 1 }
            END { for (i in id) print t[i, 1] - t[i, 0], t[i, 2] - t[i, 1] }' "$run/retry")
echo "# retry gaps (ms, level 3 then level 4):" $gaps
echo "$gaps" | awk 'NF != 2 || $1 < 9000 || $2 < 27000 { bad = 1 } END { exit bad || NR != 3 }'
result $? "redelivered through %RETRY% at delay level 3 (10 s), then level 4 (30 s)"
awk '$1 == "DLQ" && $3 == 3 && $4 == "JavaRetry" { print $2 }' "$run/retry" | sort -u >"$run/retry.dlq"
sed -n 's/^DLQ /# dead letter: /p' "$run/retry" | head -5
cmp -s "$run/retry.sent" "$run/retry.dlq"
result $? "after maxReconsumeTimes 2 every message is in %DLQ%rmq_java_retry_group (reconsumeTimes 3, RETRY_TOPIC kept)"
[ "$(awk '$1 == "DLQ" { print $5 }' "$run/retry" | sort -u | tr '\n' ' ')" = "fail-0 fail-1 fail-2 " ]
result $? "dead letters keep their bodies"

errs=$(grep -c -E 'ERROR|refused remoting' "$run/broker.log")
grep -E 'ERROR|refused remoting' "$run/broker.log" | head -5 | sed 's/^/# broker: /'
[ "$errs" -eq 0 ]
result $? "the broker logged no error"
