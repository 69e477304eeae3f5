# shellcheck shell=bash disable=SC2153 # D_CP etc. are set by bench.sh
# scripts/bench/rate.sh: stage 3's paced rows (issue 19, the latency tail).
# Sourced, not run. After stage 3's saturated run, the same producer and
# consumer run again with mqbench --rate at 50% and 80% of the send TPS that
# run reached: send P50/P99 from the send call and P99 from each send's due
# time (so a stall is not hidden), S2C P50/P99/P999 at each rate
# (stage3/rate{50,80}-*.json; report.py's paced table and the 50% goal).

# stage3_rated DIR THREADS: the two paced runs on the cluster stage 3 has up.
stage3_rated() {
  local d=$1 threads=$2 sat pct rate acked secs=$((D_CP / 2))
  # at least 10 s: the first second's start-up (route, connections, 32
  # threads) would otherwise be a fifth of a --quick run's S2C samples
  [ "$secs" -ge 10 ] || secs=10
  sat=$(bk_json_num "$d/producer.json" tps)
  if [ -z "$sat" ] || [ "${sat%.*}" -lt 10 ]; then
    bk_note "paced runs" "skipped: no saturated send TPS"
    return 0
  fi
  bk_note "saturated send TPS (the paced runs' 100%)" "$sat"
  for pct in 50 80; do
    rate=$(( ${sat%.*} * pct / 100 ))
    bk_consumer_bg "$d/rate$pct-consumer" $((secs + 90)) -t BenchCP -g "bench_rate$pct" -f last
    local cons_bg=$BK_BG_PID cons_pid=$BK_CONS_PID
    sleep 3   # the consumer's rebalance before the first paced send
    bk_producer "$d/rate$pct-producer" "$secs" -t BenchCP -w "$threads" -s 128 --rate "$rate"
    acked=$(bk_json_num "$d/rate$pct-producer.json" total)
    BK_BG_PID=$cons_bg BK_CONS_PID=$cons_pid
    bk_consume_until "$d/rate$pct-consumer" "${acked:-0}" 30 || bk_log "paced $pct%: backlog left"
    bk_consumer_stop
  done
}
