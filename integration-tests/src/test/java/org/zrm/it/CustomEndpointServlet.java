package org.zrm.it;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServlet;
import org.eclipse.jetty.ee10.websocket.server.JettyWebSocketServletFactory;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;

/**
 * An in-test custom change-source endpoint: a stream without {@code lastWatermark} gets the
 * snapshot transaction at {@code 0a} (Zero's three required tables and {@code public.it_custom}
 * with row 1); a resumed stream gets the live transactions after {@code lastWatermark}
 * ({@code 0b}: row 2, {@code 0c}: row 3) and stays open.
 */
public class CustomEndpointServlet extends JettyWebSocketServlet {
    private static final long serialVersionUID = 1L;

    static final String ITEMS = "{\"schema\":\"public\",\"name\":\"it_custom\",\"rowKey\":{\"columns\":[\"id\"]}}";

    /** The query of every connection, in order. */
    final List<Map<String, List<String>>> queries = new CopyOnWriteArrayList<>();
    /** Every ack received. */
    final java.util.concurrent.LinkedBlockingQueue<String> acks = new java.util.concurrent.LinkedBlockingQueue<>();

    @Override
    protected void configure(JettyWebSocketServletFactory factory) {
        // The query is read at the upgrade: the request is gone by the time the socket opens.
        factory.setCreator((request, response) -> new Endpoint(Map.copyOf(request.getParameterMap())));
    }

    static String table(String schema, String name, String key, String columns) {
        return "[\"data\",{\"tag\":\"create-table\",\"spec\":{\"schema\":\"" + schema + "\",\"name\":\"" + name
                + "\",\"columns\":{" + columns + "},\"primaryKey\":[" + key + "]}}]";
    }

    static String index(String schema, String name, String columns) {
        return "[\"data\",{\"tag\":\"create-index\",\"spec\":{\"schema\":\"" + schema + "\",\"tableName\":\"" + name
                + "\",\"name\":\"" + name + "_key\",\"unique\":true,\"columns\":{" + columns + "}}}]";
    }

    static String col(String name, int pos, String type, boolean notNull) {
        return "\"" + name + "\":{\"pos\":" + pos + ",\"dataType\":\"" + type + "\",\"notNull\":" + notNull + "}";
    }

    static List<String> snapshot() {
        return List.of("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"0a\"}]",
                table("zero_0", "clients", "\"clientGroupID\",\"clientID\"", col("clientGroupID", 1, "text", true) + ","
                        + col("clientID", 2, "text", true) + "," + col("lastMutationID", 3, "int8", true) + ","
                        + col("userID", 4, "text", false)),
                index("zero_0", "clients", "\"clientGroupID\":\"ASC\",\"clientID\":\"ASC\""),
                table("zero_0", "mutations", "\"clientGroupID\",\"clientID\",\"mutationID\"", col("clientGroupID", 1, "text",
                        true) + "," + col("clientID", 2, "text", true) + "," + col("mutationID", 3, "int8", true) + ","
                        + col("mutation", 4, "json", false)),
                index("zero_0", "mutations", "\"clientGroupID\":\"ASC\",\"clientID\":\"ASC\",\"mutationID\":\"ASC\""),
                table("zero", "permissions", "\"lock\"", col("lock", 1, "bool", true) + "," + col("permissions", 2, "json",
                        false) + "," + col("hash", 3, "text", false)),
                index("zero", "permissions", "\"lock\":\"ASC\""),
                table("public", "it_custom", "\"id\"", col("id", 1, "int8", true) + "," + col("label", 2, "text", false)),
                index("public", "it_custom", "\"id\":\"ASC\""),
                insert(1, "snapshot"),
                "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"0a\"}]");
    }

    static String insert(long id, String label) {
        return "[\"data\",{\"tag\":\"insert\",\"relation\":" + ITEMS + ",\"new\":{\"id\":" + id + ",\"label\":\"" + label
                + "\"}}]";
    }

    static List<String> live(String watermark, long id) {
        return List.of("[\"begin\",{\"tag\":\"begin\"},{\"commitWatermark\":\"" + watermark + "\"}]",
                insert(id, "live " + watermark), "[\"commit\",{\"tag\":\"commit\"},{\"watermark\":\"" + watermark + "\"}]");
    }

    /** One connection. */
    public class Endpoint implements Session.Listener.AutoDemanding {
        private final Map<String, List<String>> query;

        Endpoint(Map<String, List<String>> query) {
            this.query = query;
        }

        @Override
        public void onWebSocketOpen(Session session) {
            queries.add(query);
            List<String> last = query.get("lastWatermark");
            if (last == null) {
                send(session, snapshot());
                return;
            }
            String after = last.get(0);
            if ("0b".compareTo(after) > 0) {
                send(session, live("0b", 2));
            }
            if ("0c".compareTo(after) > 0) {
                send(session, live("0c", 3));
            }
        }

        @Override
        public void onWebSocketText(String text) {
            acks.add(text);
        }

        private void send(Session session, List<String> messages) {
            for (String m : messages) {
                session.sendText(m, Callback.NOOP);
            }
        }
    }
}
