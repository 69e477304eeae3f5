/* SqlBench: pull throughput of SQL92 filtering against an unfiltered pull,
 * with the unmodified 4.9 Java client (scripts/bench-sql92.sh):
 *   SqlBench NS TOPIC COUNT
 * sends COUNT messages (user properties a = i % 10, s in x/y/z) in batches,
 * then reads every queue from offset 0 to its end with DefaultMQPullConsumer
 * with "*" (a warm-up, then timed), with MessageSelector.bySql("a > 4 AND s
 * IN ('x', 'y')"), and with "*" again, printing "PULL <mode> scanned=<n>
 * delivered=<n> ms=<n> rate=<scanned/s>" and "RATIO <filtered rate / mean
 * unfiltered rate>". */
package rmqtest;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.apache.rocketmq.client.consumer.DefaultMQPullConsumer;
import org.apache.rocketmq.client.consumer.MessageSelector;
import org.apache.rocketmq.client.consumer.PullResult;
import org.apache.rocketmq.client.consumer.PullStatus;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageQueue;

public final class SqlBench {
    private SqlBench() {
    }

    private static final String[] S = {"x", "y", "z"};

    public static void main(String[] args) throws Exception {
        String ns = args[0];
        String topic = args[1];
        int count = Integer.parseInt(args[2]);
        DefaultMQProducer p = new DefaultMQProducer("sql92_bench_pg");
        p.setNamesrvAddr(ns);
        p.setSendMsgTimeout(10000);
        p.start();
        List<Message> batch = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Message m = new Message(topic, "TagA", new byte[100]);
            m.putUserProperty("a", Integer.toString(i % 10));
            m.putUserProperty("s", S[i % 3]);
            batch.add(m);
            if (batch.size() == 100 || i == count - 1) {
                p.send(batch);
                batch = new ArrayList<>();
            }
        }
        p.shutdown();
        DefaultMQPullConsumer c = new DefaultMQPullConsumer("sql92_bench_cg");
        c.setNamesrvAddr(ns);
        c.start();
        Set<MessageQueue> mqs = c.fetchSubscribeMessageQueues(topic);
        pullAll(c, mqs, "warm-up", MessageSelector.byTag("*"));
        double plain = pullAll(c, mqs, "plain", MessageSelector.byTag("*"));
        double sql = pullAll(c, mqs, "sql92", MessageSelector.bySql("a > 4 AND s IN ('x', 'y')"));
        plain = (plain + pullAll(c, mqs, "plain", MessageSelector.byTag("*"))) / 2;
        System.out.printf("RATIO %.2f%n", sql / plain);
        c.shutdown();
    }

    /* Reads every queue to its end with sel; prints and returns offsets scanned per second. */
    private static double pullAll(DefaultMQPullConsumer c, Set<MessageQueue> mqs, String mode, MessageSelector sel)
            throws Exception {
        long scanned = 0, delivered = 0, t0 = System.nanoTime();
        for (MessageQueue mq : mqs) {
            long off = 0, max = c.maxOffset(mq);
            while (off < max) {
                PullResult r = c.pull(mq, sel, off, 32);
                if (r.getPullStatus() == PullStatus.FOUND) {
                    delivered += r.getMsgFoundList().size();
                }
                if (r.getNextBeginOffset() <= off && r.getPullStatus() != PullStatus.NO_MATCHED_MSG) {
                    break;
                }
                scanned += r.getNextBeginOffset() - off;
                off = r.getNextBeginOffset();
            }
        }
        long ms = Math.max(1, (System.nanoTime() - t0) / 1000000);
        double rate = scanned * 1000.0 / ms;
        System.out.printf("PULL %s scanned=%d delivered=%d ms=%d rate=%.0f%n", mode, scanned, delivered, ms, rate);
        return rate;
    }
}
