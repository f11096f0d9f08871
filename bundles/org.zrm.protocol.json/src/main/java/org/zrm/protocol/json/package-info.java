/**
 * JSON codec for the protocol model: {@link org.zrm.protocol.json.ProtocolCodec} reads and writes
 * every message of {@link org.zrm.protocol} and {@link org.zrm.protocol.subscriber} byte for byte as
 * Zero's {@code BigIntJSON} does, and reports malformed input as
 * {@link org.zrm.protocol.json.ProtocolException} naming the offending JSON path.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.2.0")
package org.zrm.protocol.json;
