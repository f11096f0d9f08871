package org.zrm.storer.internal.queue;

/**
 * Cuts the inner change object out of a forwarded message's JSON text (upstream
 * {@code extractChangeSubstring}, spec §2.5.7), so that the change log stores it byte-identical and
 * catch-up can rebuild the live text.
 *
 * <p>Upstream cuts {@code begin}/{@code commit} at the last comma, which assumes the trailing
 * watermark object has a single member. <b>QUIRK decision:</b> the common case (a plain trailer,
 * always so for the Postgres source) is cut exactly as upstream. A trailer with extra members has
 * commas of its own; instead of cutting inside it (upstream would store invalid JSON and fail the
 * insert) the cut is made where the trailer's watermark member starts. Catch-up rebuilds a plain
 * trailer in either case, so extra trailer members are not replayed to catching-up subscribers.
 */
final class ChangeText {

    private ChangeText() {
    }

    /**
     * @param json the complete message text, e.g. {@code ["data",{"tag":"insert",…}]}
     * @param type the message type ({@code begin}, {@code data}, {@code commit}, {@code rollback})
     * @param watermark the trailer's watermark for {@code begin}/{@code commit}, else ignored
     * @return the second tuple element's text
     * @throws IllegalArgumentException if the text is not a message of that type
     */
    static String extract(String json, String type, String watermark) {
        String prefix = "[\"" + type + "\",";
        if (!json.startsWith(prefix) || !json.endsWith("]")) {
            throw new IllegalArgumentException("JSON text is not a '" + type + "' message: " + abbreviate(json));
        }
        int start = prefix.length();
        int end;
        switch (type) {
            case "begin", "commit" -> {
                String key = type.equals("begin") ? "commitWatermark" : "watermark";
                String plainTrailer = ",{\"" + key + "\":\"" + watermark + "\"}]";
                if (json.endsWith(plainTrailer)) {
                    end = json.length() - plainTrailer.length();
                } else {
                    end = json.lastIndexOf(",{\"" + key + "\":");
                    if (end < start) {
                        end = json.lastIndexOf(",{");
                    }
                }
            }
            default -> end = json.length() - 1;
        }
        if (end <= start || json.charAt(start) != '{' || json.charAt(end - 1) != '}') {
            throw new IllegalArgumentException("JSON text of a '" + type + "' message has no change object: "
                    + abbreviate(json));
        }
        return json.substring(start, end);
    }

    private static String abbreviate(String json) {
        return json.length() <= 200 ? json : json.substring(0, 200) + "…";
    }
}
