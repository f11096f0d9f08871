package org.zrm.protocol.json.internal;

import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Function;
import org.zrm.protocol.Relation;

/**
 * Remembers the JSON text of the relations one codec encoded lately, by identity.
 *
 * <p>Why: every row change carries its table's relation object, and a change source builds that
 * object once per table (pgoutput sends it once per relation message), so a stream of row changes
 * repeats the same few instances. Writing the relation member by member was a fifth of what
 * encoding a small row change cost; copying its remembered text is one append. Identity is
 * enough, and safe, because {@link Relation} is an immutable record: the same instance always
 * encodes to the same text. A relation built anew (another source, a schema change) is encoded
 * again and replaces an entry.
 *
 * <p>Bounded: {@value #SLOTS} entries, direct-mapped by identity hash code; a relation whose slot
 * is taken by another evicts it, so tables that collide cost an encoding each time, as without
 * the memo. Thread-safe without locking: each slot holds one immutable pair.
 */
public final class RelationMemo {

    static final int SLOTS = 32;

    private record Entry(Relation relation, String json) {}

    private final AtomicReferenceArray<Entry> slots = new AtomicReferenceArray<>(SLOTS);

    /**
     * @param encode writes the relation's text when it is not remembered
     * @return the JSON text of {@code relation}
     */
    String json(Relation relation, Function<Relation, String> encode) {
        int slot = System.identityHashCode(relation) & (SLOTS - 1);
        Entry e = slots.get(slot);
        if (e == null || e.relation() != relation) {
            e = new Entry(relation, encode.apply(relation));
            slots.set(slot, e);
        }
        return e.json();
    }
}
