/* TopicAttrs: RocketMQ 5's admin API (rocketmq-tools 5.5.0, DefaultMQAdminExt,
 * unmodified) reading a topic's attributes back from a broker, for
 * tests/java/mqadmin5_checks.sh (Maven profile mqadmin5):
 *
 *   NS BROKER TOPIC   prints "CONFIG <attributes>" from examineTopicConfig
 *                     (GET_TOPIC_CONFIG 351) and "ALL <attributes>" from
 *                     getAllTopicConfig (GET_ALL_TOPIC_CONFIG 21), each
 *                     map sorted by key, e.g. {message.type=FIFO}. */
package rmqtest;

import java.util.Map;
import java.util.TreeMap;

import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.tools.admin.DefaultMQAdminExt;

public final class TopicAttrs {
    private TopicAttrs() {
    }

    private static String sorted(Map<String, String> attributes) {
        return attributes == null ? "null" : new TreeMap<>(attributes).toString();
    }

    public static void main(String[] args) throws Exception {
        DefaultMQAdminExt admin = new DefaultMQAdminExt();
        admin.setNamesrvAddr(args[0]);
        admin.setInstanceName("topic-attrs-" + System.nanoTime());
        admin.start();
        try {
            TopicConfig one = admin.examineTopicConfig(args[1], args[2]);
            System.out.println("CONFIG " + sorted(one.getAttributes()));
            TopicConfig all = admin.getAllTopicConfig(args[1], 10000).getTopicConfigTable().get(args[2]);
            System.out.println("ALL " + (all == null ? "missing" : sorted(all.getAttributes())));
        } finally {
            admin.shutdown();
        }
    }
}
