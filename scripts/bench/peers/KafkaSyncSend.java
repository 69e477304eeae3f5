/*
 * scripts/bench/peers/KafkaSyncSend.java: Kafka's twin of mqbench's
 * synchronous senders for scripts/bench/peers.sh: THREADS threads share one
 * KafkaProducer and each waits for every send (send(record).get()), for
 * WARMUP seconds unmeasured and then SECONDS measured. Prints one line
 * "MEASURE <epoch ms>" when the measured window starts (so the caller can
 * read the brokers' CPU ticks then) and writes mqbench's --json keys for the
 * measured window (tps, total, failed, p50_ms, p99_ms, p999_ms) to JSON_FILE.
 *
 *   java -cp 'KAFKA_LIB/*:.' KafkaSyncSend BOOTSTRAP TOPIC THREADS SIZE
 *        WARMUP SECONDS ACKS JSON_FILE
 *
 * linger.ms is 0: a waiting sender's record leaves at once (Kafka 4's default
 * of 5 ms would add 5 ms to each synchronous send); records queued while a
 * request is in flight still travel together, as the producer does anyway.
 */
import java.io.FileWriter;
import java.io.IOException;
import java.util.Arrays;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

public final class KafkaSyncSend {
    private static volatile long measureFrom = Long.MAX_VALUE;
    private static volatile long measureUntil = Long.MAX_VALUE;

    /** One sender's latencies (microseconds) within the measured window. */
    private static final class Sender extends Thread {
        private final KafkaProducer<byte[], byte[]> producer;
        private final String topic;
        private final byte[] body;
        private final AtomicLong failed;
        long[] latencies = new long[1 << 16];
        int count;

        Sender(KafkaProducer<byte[], byte[]> producer, String topic, byte[] body, AtomicLong failed) {
            this.producer = producer;
            this.topic = topic;
            this.body = body;
            this.failed = failed;
        }

        @Override
        public void run() {
            while (true) {
                long t0 = System.nanoTime();
                if (t0 >= measureUntil) {
                    return;
                }
                boolean ok = sendOne();
                long t1 = System.nanoTime();
                if (t0 >= measureFrom && t1 <= measureUntil) {
                    if (ok) {
                        record((t1 - t0) / 1000);
                    } else {
                        failed.incrementAndGet();
                    }
                }
            }
        }

        private boolean sendOne() {
            try {
                producer.send(new ProducerRecord<>(topic, body)).get();
                return true;
            } catch (Exception e) {
                return false;
            }
        }

        private void record(long micros) {
            if (count == latencies.length) {
                latencies = Arrays.copyOf(latencies, count * 2);
            }
            latencies[count++] = micros;
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 8) {
            System.err.println("usage: KafkaSyncSend BOOTSTRAP TOPIC THREADS SIZE WARMUP SECONDS ACKS JSON_FILE");
            System.exit(2);
        }
        int threads = Integer.parseInt(args[2]);
        int size = Integer.parseInt(args[3]);
        long warmup = Long.parseLong(args[4]);
        long seconds = Long.parseLong(args[5]);
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ProducerConfig.ACKS_CONFIG, args[6]);
        p.put(ProducerConfig.LINGER_MS_CONFIG, "0");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        byte[] body = new byte[size];
        Arrays.fill(body, (byte) 'x');
        AtomicLong failed = new AtomicLong();
        Sender[] senders = new Sender[threads];
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p)) {
            long start = System.nanoTime();
            measureFrom = start + warmup * 1_000_000_000L;
            measureUntil = measureFrom + seconds * 1_000_000_000L;
            for (int i = 0; i < threads; i++) {
                senders[i] = new Sender(producer, args[1], body, failed);
                senders[i].start();
            }
            Thread.sleep(Math.max(0, (measureFrom - System.nanoTime()) / 1_000_000));
            System.out.println("MEASURE " + System.currentTimeMillis());
            System.out.flush();
            for (Sender s : senders) {
                s.join();
            }
        }
        writeJson(args[7], senders, failed.get(), seconds);
    }

    /** Writes the measured window's totals and percentiles as one JSON line. */
    private static void writeJson(String file, Sender[] senders, long failed, long seconds) throws IOException {
        int total = 0;
        for (Sender s : senders) {
            total += s.count;
        }
        long[] all = new long[total];
        int at = 0;
        for (Sender s : senders) {
            System.arraycopy(s.latencies, 0, all, at, s.count);
            at += s.count;
        }
        Arrays.sort(all);
        String json = String.format("{\"tps\": %.1f, \"total\": %d, \"failed\": %d, \"p50_ms\": %.3f, "
                + "\"p99_ms\": %.3f, \"p999_ms\": %.3f}%n", (double) total / seconds, total, failed,
                percentile(all, 0.50), percentile(all, 0.99), percentile(all, 0.999));
        try (FileWriter w = new FileWriter(file)) {
            w.write(json);
        }
        System.out.print(json);
    }

    private static double percentile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[(int) Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000.0;
    }
}
