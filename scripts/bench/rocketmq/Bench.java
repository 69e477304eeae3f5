/* Bench.java: the RocketMQ stage's producer benchmark on the official
 * rocketmq-client (rocketmq-example, whose benchmark.Producer the published
 * reports run, is not on Maven Central). It prints what that Producer prints
 * once a second ("Send TPS: .. Max RT(ms): .. Average RT(ms): .. Send Failed:
 * .. Response Failed: ..") with mqbench's final lines (percentiles,
 * [Complete]) and mqbench's --json keys, so scripts/bench/report.py reads
 * both tools alike. Sync sends from -w threads, -s byte bodies, for -d s.
 * Failures are counted as the example counts them: MQBrokerException (the
 * broker answered with an error) is a response failure, anything else a
 * send failure.
 *
 *   java -cp LIB/*:DIR Bench -n NS -t TOPIC [-w 64] [-s 128] [-d 20] [--json FILE]
 */
import java.io.FileWriter;
import java.io.IOException;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.atomic.LongAccumulator;

import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;

public final class Bench {
    /* Latency histogram: 10 us buckets below 100 ms, 1 ms buckets to 60 s. */
    private static final int FINE = 10000;
    private static final int COARSE = 60000;
    private static final AtomicLongArray HIST = new AtomicLongArray(FINE + COARSE + 1);

    private static final LongAdder OK = new LongAdder();
    private static final LongAdder RT_SUM_US = new LongAdder();
    private static final LongAdder SEND_FAILED = new LongAdder();
    private static final LongAdder RESP_FAILED = new LongAdder();
    private static final LongAccumulator MAX_RT_US = new LongAccumulator(Long::max, 0);
    private static final AtomicBoolean STOP = new AtomicBoolean();

    private static int bucket(long us) {
        if (us < FINE * 10L)
            return (int) (us / 10);
        long ms = us / 1000;
        return (int) Math.min(FINE + ms - FINE / 100, FINE + COARSE);
    }

    private static long bucketUs(int b) {
        return b < FINE ? b * 10L + 10 : (b - FINE + FINE / 100 + 1) * 1000L;
    }

    /* The q quantile of every recorded RT, in ms (the bucket's upper edge). */
    private static double percentileMs(double q) {
        long total = 0;
        for (int i = 0; i < HIST.length(); i++)
            total += HIST.get(i);
        long want = (long) Math.ceil(q * total), seen = 0;
        for (int i = 0; i < HIST.length() && total > 0; i++) {
            seen += HIST.get(i);
            if (seen >= want)
                return bucketUs(i) / 1000.0;
        }
        return 0;
    }

    private static void sendLoop(DefaultMQProducer p, String topic, byte[] body) {
        while (!STOP.get()) {
            long t0 = System.nanoTime();
            try {
                SendResult r = p.send(new Message(topic, body));
                long us = (System.nanoTime() - t0) / 1000;
                if (r.getSendStatus() == SendStatus.SEND_OK) {
                    OK.increment();
                    RT_SUM_US.add(us);
                    MAX_RT_US.accumulate(us);
                    HIST.incrementAndGet(bucket(us));
                } else {
                    RESP_FAILED.increment();
                }
            } catch (MQBrokerException e) {
                RESP_FAILED.increment();
            } catch (InterruptedException e) {
                return;
            } catch (Exception e) {
                SEND_FAILED.increment();
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    return;
                }
            }
        }
    }

    private static String arg(String[] a, String name, String dflt) {
        for (int i = 0; i + 1 < a.length; i++)
            if (a[i].equals(name))
                return a[i + 1];
        return dflt;
    }

    public static void main(String[] a) throws Exception {
        String ns = arg(a, "-n", null), topic = arg(a, "-t", "BenchmarkTest"), json = arg(a, "--json", null);
        int threads = Integer.parseInt(arg(a, "-w", "64"));
        int size = Integer.parseInt(arg(a, "-s", "128"));
        int secs = Integer.parseInt(arg(a, "-d", "20"));
        if (ns == null) {
            System.err.println("usage: Bench -n NS -t TOPIC [-w 64] [-s 128] [-d 20] [--json FILE]");
            System.exit(2);
        }
        System.out.printf("topic: %s threadCount: %d messageSize: %d keyEnable: false messageQuantity: 0 "
                + "batchSize: 1 asyncEnable: false%n", topic, threads, size);
        byte[] body = new byte[size];
        Random rnd = new Random();
        for (int i = 0; i < size; i++)
            body[i] = (byte) ('a' + rnd.nextInt(26));
        DefaultMQProducer p = new DefaultMQProducer("benchmark_producer");
        p.setNamesrvAddr(ns);
        p.setInstanceName(Long.toString(System.nanoTime()));
        p.setCompressMsgBodyOverHowmuch(Integer.MAX_VALUE);
        p.start();
        Thread[] ts = new Thread[threads];
        long start = System.nanoTime();
        for (int i = 0; i < threads; i++) {
            ts[i] = new Thread(() -> sendLoop(p, topic, body));
            ts[i].start();
        }
        long prevOk = 0, prevRt = 0, prevT = start;
        while (System.nanoTime() - start < secs * 1_000_000_000L) {
            Thread.sleep(1000);
            long now = System.nanoTime(), ok = OK.sum(), rt = RT_SUM_US.sum();
            double win = (now - prevT) / 1e9;
            System.out.printf("Send TPS: %d Max RT(ms): %d Average RT(ms): %7.3f Send Failed: %d "
                    + "Response Failed: %d%n", Math.round((ok - prevOk) / win), MAX_RT_US.get() / 1000,
                    ok > prevOk ? (rt - prevRt) / 1000.0 / (ok - prevOk) : 0.0, SEND_FAILED.sum(),
                    RESP_FAILED.sum());
            prevOk = ok;
            prevRt = rt;
            prevT = now;
        }
        STOP.set(true);
        for (Thread t : ts)
            t.join();
        double el = (System.nanoTime() - start) / 1e9;
        p.shutdown();
        long ok = OK.sum();
        double avg = ok > 0 ? RT_SUM_US.sum() / 1000.0 / ok : 0, max = MAX_RT_US.get() / 1000.0;
        double p50 = percentileMs(0.5), p90 = percentileMs(0.9), p99 = percentileMs(0.99), p999 = percentileMs(0.999);
        System.out.printf("Latency RT(ms) P50: %.3f P90: %.3f P99: %.3f P999: %.3f Max: %.3f%n", p50, p90, p99,
                p999, max);
        System.out.printf("[Complete] Send Total: %d Send TPS: %d Max RT(ms): %d Average RT(ms): %7.3f "
                + "Send Failed: %d Response Failed: %d%n", ok, Math.round(ok / el), MAX_RT_US.get() / 1000, avg,
                SEND_FAILED.sum(), RESP_FAILED.sum());
        if (json != null)
            writeJson(json, topic, threads, size, el, ok, avg, max, p50, p90, p99, p999);
        System.exit(0);
    }

    private static void writeJson(String path, String topic, int threads, int size, double el, long ok,
            double avg, double max, double p50, double p90, double p99, double p999) throws IOException {
        try (FileWriter w = new FileWriter(path)) {
            w.write(String.format("{\"mode\": \"producer\", \"tool\": \"Bench.java\", \"topic\": \"%s\", "
                    + "\"threads\": %d, \"size\": %d, \"batch\": 1, \"async\": false, \"seconds\": %.3f, "
                    + "\"total\": %d, \"tps\": %d, \"avg_ms\": %.3f, \"max_ms\": %.3f, \"send_failed\": %d, "
                    + "\"response_failed\": %d, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, "
                    + "\"p999_ms\": %.3f}%n", topic, threads, size, el, ok, Math.round(ok / el), avg, max,
                    SEND_FAILED.sum(), RESP_FAILED.sum(), p50, p90, p99, p999));
        }
    }
}
