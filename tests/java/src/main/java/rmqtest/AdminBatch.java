/* AdminBatch: RocketMQ's unmodified admin tool (rocketmq-tools 4.9.7,
 * MQAdminStartup.main0, which signs with the account of
 * -Drocketmq.home.dir's conf/tools.yml) run for several commands in one
 * JVM, for java_lib.sh's adm and tests/java/run_mqadmin_acl_test.sh (5.5.0's
 * tool too, MQAdminStartup.main0 being the same there):
 *
 *   AdminBatch DIR
 *
 * reads lines "NAME COMMAND ARGS..." (space-separated) from stdin, runs
 * mqadmin COMMAND ARGS... with its stdout in DIR/NAME.out and its stderr in
 * DIR/NAME.err, then prints "DONE NAME". Ends at the end of stdin. Each
 * command gets fresh command objects, as in a JVM of its own: the tool keeps
 * them in a static list (4.9's subCommandList, 5.x's SUB_COMMANDS), and
 * some keep their admin client across calls after shutting it down
 * (brokerConsumeStats: "connect to ... failed" the second time). */
package rmqtest;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.apache.rocketmq.tools.command.MQAdminStartup;

public final class AdminBatch {
    private AdminBatch() {
    }

    /* Empties MQAdminStartup's list of command objects: main0 fills it again. */
    private static void forgetCommands() throws ReflectiveOperationException {
        for (String name : new String[] {"subCommandList", "SUB_COMMANDS"}) {
            try {
                Field f = MQAdminStartup.class.getDeclaredField(name);
                f.setAccessible(true);
                ((List<?>) f.get(null)).clear();
                return;
            } catch (NoSuchFieldException e) {
                continue;
            }
        }
        throw new NoSuchFieldException("MQAdminStartup's command list");
    }

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        PrintStream out = System.out, err = System.err;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null;) {
            String[] words = line.trim().split(" +");
            try (PrintStream o = new PrintStream(new FileOutputStream(new File(dir, words[0] + ".out")), true, "UTF-8");
                 PrintStream e = new PrintStream(new FileOutputStream(new File(dir, words[0] + ".err")), true, "UTF-8")) {
                System.setOut(o);
                System.setErr(e);
                forgetCommands();
                MQAdminStartup.main0(Arrays.copyOfRange(words, 1, words.length), null);
            } finally {
                System.setOut(out);
                System.setErr(err);
            }
            out.println("DONE " + words[0]);
            out.flush();
        }
    }
}
