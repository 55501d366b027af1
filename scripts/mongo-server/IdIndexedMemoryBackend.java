import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;

import java.util.List;

/**
 * mongo-java-server's memory backend, except that a query naming one `_id` value among other
 * conditions is answered through the `_id` index, as a real mongod does.
 *
 * The stock backend only uses an index when the filter has exactly the index's keys, so
 * `{_id: x, state: "QUEUED"}` (every conditional update of the service) scanned the whole
 * collection: 4.8 ms per update on 20 000 documents against 0.8 ms for `{_id: x}`. Results are
 * unchanged: the document found through the index is still matched against the whole filter.
 */
public class IdIndexedMemoryBackend extends MemoryBackend {
    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new Database(databaseName, getCursorRegistry());
    }

    private static final class Database extends MemoryDatabase {
        Database(String name, CursorRegistry cursorRegistry) {
            super(name, cursorRegistry);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
            return new Collection(this, collectionName, options, cursorRegistry);
        }
    }

    private static final class Collection extends MemoryCollection {
        Collection(Database database, String name, CollectionOptions options, CursorRegistry cursorRegistry) {
            super(database, name, options, cursorRegistry);
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int numberToSkip, int limit, int batchSize, Document fieldSelector) {
            Object id = query == null ? null : query.get("_id");
            if (query != null && query.size() > 1 && isPlainValue(id)) {
                Index<Integer> idIndex = idIndex();
                if (idIndex != null) {
                    Iterable<Integer> positions = idIndex.getPositions(new Document("_id", id));
                    return matchDocuments(query, positions, orderBy, numberToSkip, limit, batchSize, fieldSelector);
                }
            }
            return super.queryDocuments(query, orderBy, numberToSkip, limit, batchSize, fieldSelector);
        }

        /** An equality value: not an operator document, array, or regular expression. */
        private static boolean isPlainValue(Object id) {
            return id != null && !(id instanceof Document) && !(id instanceof List) && !(id instanceof java.util.regex.Pattern)
                    && !id.getClass().getSimpleName().contains("Regular");
        }

        private Index<Integer> idIndex() {
            for (Index<Integer> index : getIndexes()) {
                List<IndexKey> keys = index.getKeys();
                if (index.isUnique() && keys.size() == 1 && keys.get(0).getKey().equals("_id")) return index;
            }
            return null;
        }
    }
}
