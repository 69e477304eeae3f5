/* PopBench: pop consumption against pull consumption on the same topic,
 * with the unmodified 5.x Java client over remoting (scripts/bench-pop.sh):
 *   PopBench NS TOPIC COUNT BROKER_PID [WARMUP_S]
 * sends COUNT messages of 128 B in batches, then consumes all of them with a
 * DefaultMQPushConsumer of a new group, from the first offset, in each mode:
 * pull (the client rebalances and pulls, offsets committed by the client)
 * and pop (setClientRebalance(false) and SET_MESSAGE_REQUEST_MODE POP: the
 * broker assigns, every message popped and acked). A warm-up run of each
 * mode (repeated until WARMUP_S seconds passed, for a JVM broker's JIT),
 * then pull, pop, pull, pop timed; each run prints "CONSUME <mode>
 * n=<n> ms=<n> rate=<msg/s> broker_cpu_us_per_msg=<n>" (the broker's user
 * and system time from /proc/BROKER_PID/stat over the run), and the end
 * "RATIO pop/pull rate=<r> cpu=<r>" of the means. */
package rmqtest;

import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyContext;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.common.message.MessageRequestMode;

public final class PopBench {
    private static final long CLOCK_TICK_US = 10000;   /* USER_HZ 100 */
    private static final long RUN_LIMIT_S = 300;

    private PopBench() {
    }

    public static void main(String[] args) {
        try {
            bench(args);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }

    private static void bench(String[] args) throws Exception {
        String ns = args[0], topic = args[1];
        int count = Integer.parseInt(args[2]);
        String brokerPid = args[3];
        long warmupEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(args.length > 4 ? Long.parseLong(args[4]) : 0);
        DefaultMQProducer p = new DefaultMQProducer("pop_bench_pg");
        p.setNamesrvAddr(ns);
        p.setSendMsgTimeout(10000);
        p.start();
        String brokerName = preload(p, topic, count);
        MQClientInstance inst = p.getDefaultMQProducerImpl().getMqClientFactory();
        String addr = inst.findBrokerAddressInPublish(brokerName);
        double[] pull = new double[2], pop = new double[2];
        do {
            run(ns, topic, count, brokerPid, "pull-warmup", inst, null);
            run(ns, topic, count, brokerPid, "pop-warmup", inst, addr);
        } while (System.nanoTime() < warmupEnd);
        for (int i = 0; i < 2; i++) {
            add(pull, run(ns, topic, count, brokerPid, "pull", inst, null));
            add(pop, run(ns, topic, count, brokerPid, "pop", inst, addr));
        }
        p.shutdown();
        System.out.printf("RATIO pop/pull rate=%.2f cpu=%.2f%n", pop[0] / pull[0], pop[1] / pull[1]);
    }

    private static void add(double[] sum, double[] run) {
        sum[0] += run[0];
        sum[1] += run[1];
    }

    /* COUNT messages of 128 B in batches of 100; the broker that took them. */
    private static String preload(DefaultMQProducer p, String topic, int count) throws Exception {
        List<Message> batch = new ArrayList<>();
        String brokerName = null;
        for (int i = 0; i < count; i++) {
            batch.add(new Message(topic, "TagA", "k" + i, new byte[128]));
            if (batch.size() == 100 || i == count - 1) {
                SendResult r = p.send(batch);
                brokerName = r.getMessageQueue().getBrokerName();
                batch = new ArrayList<>();
            }
        }
        return brokerName;
    }

    /* The broker's user + system CPU time so far, in microseconds. */
    private static long brokerCpuUs(String pid) throws Exception {
        String stat = new String(Files.readAllBytes(Paths.get("/proc/" + pid + "/stat")));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * CLOCK_TICK_US;
    }

    /* One run of a new group, in pull mode when popBroker is null, else in
     * pop mode (set through inst on the broker at popBroker); prints it and
     * returns {msg/s, broker CPU us per message}. */
    private static double[] run(String ns, String topic, int count, String brokerPid, String mode,
                                MQClientInstance inst, String popBroker) throws Exception {
        String group = "pop_bench_" + mode.replace('-', '_') + "_" + System.nanoTime();
        if (popBroker != null)
            inst.getMQClientAPIImpl().setMessageRequestMode(popBroker, topic, group, MessageRequestMode.POP, 0, 3000);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        DefaultMQPushConsumer c = new DefaultMQPushConsumer(group);
        c.setNamesrvAddr(ns);
        c.setInstanceName("pop-bench-" + System.nanoTime());
        c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
        c.setClientRebalance(popBroker == null);
        c.subscribe(topic, "*");
        c.registerMessageListener((List<MessageExt> msgs, ConsumeConcurrentlyContext ctx) -> {
            for (MessageExt m : msgs)
                seen.add(m.getKeys());
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        long cpu0 = brokerCpuUs(brokerPid), t0 = System.nanoTime();
        c.start();
        long end = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(RUN_LIMIT_S);
        while (seen.size() < count && System.currentTimeMillis() < end)
            Thread.sleep(5);
        long ms = Math.max(1, (System.nanoTime() - t0) / 1000000), cpu = brokerCpuUs(brokerPid) - cpu0;
        c.shutdown();
        double rate = seen.size() * 1000.0 / ms, cpuPerMsg = (double) cpu / Math.max(1, seen.size());
        System.out.printf("CONSUME %s n=%d ms=%d rate=%.0f broker_cpu_us_per_msg=%.1f%n", mode, seen.size(), ms, rate,
                          cpuPerMsg);
        if (seen.size() < count)
            throw new IllegalStateException(mode + ": " + seen.size() + " of " + count + " consumed in "
                                            + RUN_LIMIT_S + " s");
        return new double[] {rate, cpuPerMsg};
    }
}
