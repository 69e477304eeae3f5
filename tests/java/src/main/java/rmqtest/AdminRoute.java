/* AdminRoute: the unmodified RocketMQ 4.9 Java client's admin path
 * (MQClientAPIImpl, as mqadmin and the producers use it) against a name
 * server given as args[0]; prints what it got, one fact a line, for
 * tests/java/run_admin_test.sh to check:
 *   ROUTE <brokerName> read=<n> write=<n> perm=<p> master=<addr>
 *   CLUSTER <cluster> <brokerName> master=<addr>
 *   TOPICLIST <topic>            (for each topic)
 *   NOTEXIST code=<responseCode> (the route of a topic that does not exist)
 */
package rmqtest;

import java.util.Map;
import java.util.Set;

import org.apache.rocketmq.client.ClientConfig;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.impl.MQClientManager;
import org.apache.rocketmq.client.impl.factory.MQClientInstance;
import org.apache.rocketmq.common.protocol.body.ClusterInfo;
import org.apache.rocketmq.common.protocol.body.TopicList;
import org.apache.rocketmq.common.protocol.route.BrokerData;
import org.apache.rocketmq.common.protocol.route.QueueData;
import org.apache.rocketmq.common.protocol.route.TopicRouteData;

public final class AdminRoute {
    private AdminRoute() {
    }

    public static void main(String[] args) throws Exception {
        String namesrv = args[0];
        String topic = args[1];
        ClientConfig cc = new ClientConfig();
        cc.setNamesrvAddr(namesrv);
        cc.setInstanceName("rmq-remoting-admin");
        MQClientInstance inst = MQClientManager.getInstance().getOrCreateMQClientInstance(cc);
        MQClientAPIImpl api = inst.getMQClientAPIImpl();
        api.start();
        api.updateNameServerAddressList(namesrv);
        try {
            TopicRouteData rd = api.getTopicRouteInfoFromNameServer(topic, 5000);
            for (QueueData q : rd.getQueueDatas()) {
                String master = "";
                for (BrokerData bd : rd.getBrokerDatas()) {
                    if (bd.getBrokerName().equals(q.getBrokerName())) {
                        master = bd.getBrokerAddrs().get(0L);
                    }
                }
                System.out.println("ROUTE " + q.getBrokerName() + " read=" + q.getReadQueueNums()
                    + " write=" + q.getWriteQueueNums() + " perm=" + q.getPerm() + " master=" + master);
            }
            ClusterInfo ci = api.getBrokerClusterInfo(5000);
            for (Map.Entry<String, Set<String>> e : ci.getClusterAddrTable().entrySet()) {
                for (String name : e.getValue()) {
                    BrokerData bd = ci.getBrokerAddrTable().get(name);
                    System.out.println("CLUSTER " + e.getKey() + " " + name + " master="
                        + (bd == null ? "" : bd.getBrokerAddrs().get(0L)));
                }
            }
            TopicList tl = api.getTopicListFromNameServer(5000);
            for (String t : tl.getTopicList()) {
                System.out.println("TOPICLIST " + t);
            }
            try {
                api.getTopicRouteInfoFromNameServer(topic + "-missing", 5000);
                System.out.println("NOTEXIST none");
            } catch (MQClientException e) {
                System.out.println("NOTEXIST code=" + e.getResponseCode());
            }
        } finally {
            api.shutdown();
        }
        System.exit(0); // the client's worker threads are not daemons
    }
}
