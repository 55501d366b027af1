import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.bson.Document;
import de.bwaldvogel.mongo.wire.bson.BsonEncoder;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;

import java.util.Collection;
import java.util.Iterator;
import java.util.List;

/**
 * Replays, in one thread and in a fixed order, what two connections of the local MongoDB-wire
 * server can do at the same time: a reply is built, its encoding starts (the server's network
 * thread encodes it once the command has returned and the collection's lock is released), another
 * connection's update changes the same document (adds one field, removes another), then the
 * encoding goes on.
 *
 * Usage: java ReplySnapshotProbe <backend class>. Prints one line per reply, `<case> <outcome>`:
 * the outcome is the document's fields and status as encoded, or the exception encoding threw.
 */
public final class ReplySnapshotProbe {
    private static final String DB = "probe";

    public static void main(String[] args) throws Exception {
        MongoBackend backend = (MongoBackend) Class.forName(args[0]).getDeclaredConstructor().newInstance();
        Channel channel = new EmbeddedChannel();
        run(backend, channel, "insert", new Document("insert", "otps").append("documents", List.of(
            new Document("_id", "a").append("status", "ACTIVE").append("attemptsUsed", 0).append("resendCode", "r"),
            new Document("_id", "b").append("status", "ACTIVE").append("attemptsUsed", 0).append("resendCode", "r"),
            new Document("_id", "c").append("status", "ACTIVE").append("attemptsUsed", 0).append("resendCode", "r"),
            new Document("_id", "d").append("status", "ACTIVE").append("attemptsUsed", 0).append("resendCode", "r"),
            new Document("_id", "e").append("status", "ACTIVE").append("attemptsUsed", 0).append("resendCode", "r"),
            new Document("_id", "f").append("status", "ACTIVE").append("delivery", new Document("status", "QUEUED").append("queuedAt", 0)))));
        run(backend, channel, "insert", new Document("insert", "users").append("documents", List.of(new Document("_id", "u").append("otp", "e"))));

        // findOneAndUpdate(returnDocument: 'after'): the service's takeAttempt.
        Document taken = run(backend, channel, "findAndModify", new Document("findAndModify", "otps")
            .append("query", new Document("_id", "a")).append("update", new Document("$inc", new Document("attemptsUsed", 1)))
            .append("new", true));
        report("findAndModify", (Document) taken.get("value"), taken, () -> markUsed(backend, channel, "a"));

        // find: the first batch of a cursor, and a later batch (getMore).
        Document found = run(backend, channel, "find", new Document("find", "otps")
            .append("filter", new Document("_id", new Document("$in", List.of("b", "c")))).append("batchSize", 1));
        Document cursor = (Document) found.get("cursor");
        report("find", first((List<?>) cursor.get("firstBatch")), found, () -> markUsed(backend, channel, "b"));
        Document more = run(backend, channel, "getMore", new Document("getMore", cursor.get("id")).append("collection", "otps").append("batchSize", 1));
        report("getMore", first((List<?>) ((Document) more.get("cursor")).get("nextBatch")), more, () -> markUsed(backend, channel, "c"));
        // aggregate: a pipeline that passes stored documents through ($match only).
        Document aggregated = run(backend, channel, "aggregate", new Document("aggregate", "otps")
            .append("pipeline", List.of(new Document("$match", new Document("_id", "d")))).append("cursor", new Document()));
        report("aggregate", first((List<?>) ((Document) aggregated.get("cursor")).get("firstBatch")), aggregated, () -> markUsed(backend, channel, "d"));
        // aggregate with $lookup: the documents joined from another collection.
        Document joined = run(backend, channel, "aggregate", new Document("aggregate", "users")
            .append("pipeline", List.of(new Document("$lookup", new Document("from", "otps").append("localField", "otp")
                .append("foreignField", "_id").append("as", "otps")))).append("cursor", new Document()));
        Document user = first((List<?>) ((Document) joined.get("cursor")).get("firstBatch"));
        report("lookup", user == null ? null : first((List<?>) user.get("otps")), joined, () -> markUsed(backend, channel, "e"));
        // distinct of a field holding sub-documents: the values are the stored sub-documents.
        Document distinct = run(backend, channel, "distinct", new Document("distinct", "otps").append("key", "delivery")
            .append("query", new Document("_id", "f")));
        report("distinct", first((Collection<?>) distinct.get("values")), distinct, () -> markSent(backend, channel, "f"));
        backend.close();
    }

    /** The service's markUsed: one field added, one removed (a change of the document's shape). */
    private static void markUsed(MongoBackend backend, Channel channel, String id) {
        run(backend, channel, "update", new Document("update", "otps").append("updates", List.of(
            new Document("q", new Document("_id", id)).append("u", new Document("$set", new Document("status", "USED").append("usedAt", 1))
                .append("$unset", new Document("resendCode", 1))))));
    }

    /** A delivery sent: a field of the sub-document added, another removed. */
    private static void markSent(MongoBackend backend, Channel channel, String id) {
        run(backend, channel, "update", new Document("update", "otps").append("updates", List.of(
            new Document("q", new Document("_id", id)).append("u", new Document("$set", new Document("delivery.status", "SENT").append("delivery.sentAt", 1))
                .append("$unset", new Document("delivery.queuedAt", 1))))));
    }

    private static Document run(MongoBackend backend, Channel channel, String command, Document query) {
        query.put("$db", DB);
        return backend.handleCommand(channel, DB, command, query);
    }

    private static Document first(Collection<?> batch) {
        return batch.isEmpty() ? null : (Document) batch.iterator().next();
    }

    /** Encodes `reply` with `meanwhile` run once its document's first field is encoded. */
    private static void report(String name, Document document, Document reply, Runnable meanwhile) {
        if (document == null) {
            System.out.println(name + " none");
            return;
        }
        try {
            Iterator<String> fields = document.keySet().iterator();
            fields.next();
            meanwhile.run();
            while (fields.hasNext()) fields.next();
            BsonEncoder.encodeDocument(reply, Unpooled.buffer());
            System.out.println(name + " " + document.keySet() + " " + document.get("status"));
        } catch (RuntimeException e) {
            System.out.println(name + " " + e.getClass().getName());
        }
    }
}
