/**
 * Immutable model of Zero's change-source protocol ({@code protocol/current}): the downstream
 * {@link org.zrm.protocol.ChangeStreamMessage} tuples a change source emits, the data and schema
 * {@link org.zrm.protocol.Change changes} they carry, the upstream acknowledgement
 * {@link org.zrm.protocol.ChangeSourceUpstream} and the {@link org.zrm.protocol.BackfillRequest}.
 *
 * <p>Conventions used throughout the package:
 * <ul>
 *   <li>Components documented as "absent when {@code null}" correspond to optional JSON members
 *       that are omitted from the object (JavaScript {@code undefined}); a JSON {@code null} that
 *       must be kept distinct from absence is modelled with {@link org.zrm.protocol.Maybe}.</li>
 *   <li>Free-form JSON values (row values, metadata, error details, unknown fields) use plain Java
 *       types: {@code null}, {@link java.lang.Boolean}, {@link java.lang.String},
 *       {@link java.lang.Long} or {@link java.math.BigInteger} for integer literals,
 *       {@link java.lang.Double} for other numbers, {@link java.util.List} and insertion-ordered
 *       {@link java.util.Map Map&lt;String,Object&gt;}. Within an object, an absent key and a key
 *       mapped to {@code null} mean different things.</li>
 *   <li>Every object keeps the members it does not model in a {@link org.zrm.protocol.Passthrough},
 *       mirroring upstream's "passthrough" validation, so that decoding and re-encoding is
 *       lossless.</li>
 * </ul>
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package org.zrm.protocol;
