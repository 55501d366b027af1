import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The memory backend (with its `_id` index use) made durable by a write-ahead journal: every
 * write command is appended to a file before its answer goes back, and replayed in order at start.
 * When the journal grows past its threshold the data is written out as a snapshot and the journal
 * starts afresh, so start-up reads the live data plus a bounded journal, whatever the history.
 *
 * Files (see RecordFormat): `<journal>` and `<journal>.snapshot`; each record has a CRC32C.
 * Start-up refuses (JournalRefusal) damage with data after it, and drops a last record cut short
 * by a crash, saying so. Compaction writes the snapshot of generation G+1 to a temporary file,
 * fsyncs it, renames it into place, then renames a fresh journal of generation G+1 over the old
 * one: a crash between the two renames leaves snapshot G+1 beside journal G, whose writes the
 * snapshot already holds, and start-up then simply starts the fresh journal.
 *
 * Why not mongo-java-server's H2 backend: it does not enforce sparse unique indexes (the service
 * relies on them for race safety) and commits about once a second, so a kill -9 loses the last
 * second of writes it acknowledged. Here a write is applied and journaled under one lock, so the
 * journal's order is the order writes took effect and a replay rebuilds the same data (a command
 * that failed fails again the same way). When appends reach the disk is JournalSync's business.
 * Not replayed identically from the journal: values the server itself makes up (an upsert's
 * ObjectId when the filter names no `_id`, `$currentDate`); the snapshot holds them as they were.
 */
public final class JournaledMemoryBackend extends IdIndexedMemoryBackend {
    private static final Set<String> WRITES = Set.of(
            "insert", "update", "delete", "findandmodify", "create", "createindexes", "drop",
            "dropdatabase", "dropindexes", "renamecollection");
    /** Where an oplog would live (LocalMongoServer enables none): never part of a snapshot. */
    private static final String OPLOG_DATABASE = "local";
    private static final int SNAPSHOT_BATCH_DOCUMENTS = 1000;
    private static final int SNAPSHOT_BATCH_BYTES = 4 * 1024 * 1024;

    private final Object writeLock = new Object();
    private final Path journalPath;
    private final Path snapshotPath;
    private final JournalSync sync;
    private final long compactAfterBytes;
    private final Channel replayChannel = new EmbeddedChannel();
    private FileChannel journal;
    private long generation;
    private long journalBytes;
    private long snapshotBytes;
    /** After a failed compaction, the journal size at which to try again. */
    private long retryCompactionAt;

    /**
     * @param compactAfterBytes journal size past which it is compacted, unless the last snapshot
     *     is larger (then the journal may grow to that size: compaction work stays proportional
     *     to the writes it saves replaying).
     */
    public JournaledMemoryBackend(Path file, JournalSync.Mode fsync, long compactAfterBytes) throws IOException, JournalRefusal {
        this.journalPath = file.toAbsolutePath();
        this.snapshotPath = JournalFiles.snapshotOf(journalPath);
        this.sync = new JournalSync(fsync);
        this.compactAfterBytes = compactAfterBytes;
        Files.createDirectories(journalPath.getParent());
        recover();
    }

    // ---- start-up ----

    private void recover() throws IOException, JournalRefusal {
        long started = System.nanoTime();
        long startedCpu = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
        for (Path unfinished : List.of(JournalFiles.temporaryOf(journalPath), JournalFiles.temporaryOf(snapshotPath))) {
            if (Files.deleteIfExists(unfinished)) log("removed " + unfinished + ", left by a compaction that did not finish (the files it was replacing are intact)");
        }
        SnapshotFile.Loaded snapshot = Files.exists(snapshotPath) ? SnapshotFile.load(snapshotPath, journalPath, this::applySnapshotEntry) : null;
        snapshotBytes = snapshot == null ? 0 : snapshot.bytes();
        long journalGeneration = journalGeneration();
        long replayed;
        boolean convert = false;
        if (journalGeneration == NO_JOURNAL) {
            if (snapshot != null)
                throw JournalRefusal.unrelatedFiles(journalPath, "the snapshot (generation " + snapshot.generation() + ") is there but the journal is missing or empty, so the writes made since the snapshot are gone");
            generation = 0;
            JournalFiles.createJournal(journalPath, 0);
            replayed = 0;
        } else if (journalGeneration == LEGACY_JOURNAL) {
            if (snapshot == null) {
                replayed = replayLegacy();
                generation = 0;
                convert = true;
            } else if (snapshot.generation() == 1) {
                log("the conversion of an old-format journal was interrupted after its snapshot was written; starting a fresh journal");
                generation = 1;
                JournalFiles.createJournal(journalPath, 1);
                replayed = 0;
            } else {
                throw JournalRefusal.unrelatedFiles(journalPath, "an old-format journal beside a snapshot of generation " + snapshot.generation());
            }
        } else if (snapshot == null && journalGeneration != 0) {
            throw JournalRefusal.unrelatedFiles(journalPath, "the journal is of generation " + journalGeneration + ", which starts from a snapshot, and the snapshot is missing");
        } else if (snapshot != null && snapshot.generation() == journalGeneration + 1) {
            log("a compaction was interrupted after its snapshot was written; the journal's writes are all in the snapshot: starting a fresh journal");
            generation = snapshot.generation();
            JournalFiles.createJournal(journalPath, generation);
            replayed = 0;
        } else if (snapshot != null && snapshot.generation() != journalGeneration) {
            throw JournalRefusal.unrelatedFiles(journalPath, "the snapshot is of generation " + snapshot.generation() + " and the journal of generation " + journalGeneration);
        } else {
            generation = journalGeneration;
            replayed = -1;
        }
        journal = FileChannel.open(journalPath, StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (replayed < 0) replayed = replayJournal();
        journalBytes = journal.size();
        journal.position(journalBytes);
        sync.switchTo(journal);
        log("loaded " + (snapshot == null ? "no snapshot" : "a snapshot of " + snapshot.records() + " records (" + snapshot.bytes() + " bytes)")
                + " and replayed " + replayed + " journal writes in " + (System.nanoTime() - started) / 1_000_000 + " ms ("
                + (ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - startedCpu) / 1_000_000 + " ms of CPU); fsync " + sync.mode().name().toLowerCase(Locale.ROOT)
                + ", generation " + generation + ", " + journalPath);
        if (convert) {
            log("converting the old-format journal (no checksums) to a snapshot and a fresh journal");
            // Never append checksummed records to an old-format file: without the conversion, no start.
            if (!compact()) throw new IOException("could not convert the old-format journal " + journalPath + " (it is unchanged; see the warning above)");
        } else if (shouldCompact()) {
            compact();
        }
    }

    private static final long NO_JOURNAL = -1;
    private static final long LEGACY_JOURNAL = -2;

    private long journalGeneration() throws IOException, JournalRefusal {
        if (!Files.exists(journalPath) || Files.size(journalPath) == 0) return NO_JOURNAL;
        try (FileChannel channel = FileChannel.open(journalPath, StandardOpenOption.READ)) {
            ByteBuffer header = ByteBuffer.allocate(RecordFormat.FILE_HEADER_BYTES);
            while (header.hasRemaining() && channel.read(header) > 0) {}
            header.flip();
            if (!RecordFormat.startsWithMagic(header, RecordFormat.JOURNAL_MAGIC)) return LEGACY_JOURNAL;
            long found = RecordFormat.generationOf(header, RecordFormat.JOURNAL_MAGIC);
            if (found < 0) throw JournalRefusal.damagedJournalRecord(journalPath, 0, "its file header is incomplete or fails its checksum", channel.size(), 0);
            return found;
        }
    }

    /** Replays the current-format journal; drops a torn last record, refuses damage. */
    private long replayJournal() throws IOException, JournalRefusal {
        RecordReader reader = new RecordReader(journal, RecordFormat.FILE_HEADER_BYTES);
        long records = 0;
        while (true) {
            RecordReader.Result result = reader.next();
            if (result instanceof RecordReader.Record record) {
                Document entry;
                try {
                    entry = JournalFiles.decode(record.payload());
                } catch (RuntimeException e) {
                    throw JournalRefusal.damagedJournalRecord(journalPath, record.offset(), "the record passes its checksum but does not decode (" + e.getMessage() + ")", journal.size() - record.offset(), records);
                }
                replayEntry(entry);
                records++;
            } else if (result instanceof RecordReader.Torn torn) {
                dropTornTail(torn);
                return records;
            } else if (result instanceof RecordReader.Damaged damaged) {
                throw JournalRefusal.damagedJournalRecord(journalPath, damaged.offset(), damaged.reason(), journal.size() - damaged.offset(), records);
            } else {
                return records;
            }
        }
    }

    private long replayLegacy() throws IOException, JournalRefusal {
        try (FileChannel legacy = FileChannel.open(journalPath, StandardOpenOption.READ)) {
            LegacyJournal.Replayed replayed = LegacyJournal.replay(legacy, journalPath, this::replayEntry);
            if (replayed.torn() != null) logTorn(replayed.torn());
            // The conversion's compaction replaces the whole file, the torn part with it.
            return replayed.records();
        }
    }

    private void dropTornTail(RecordReader.Torn torn) throws IOException {
        logTorn(torn);
        journal.truncate(torn.offset());
        journal.force(true);
    }

    private void logTorn(RecordReader.Torn torn) {
        log("WARNING: dropped the last record of " + journalPath + " at offset " + torn.offset() + " (" + torn.droppedBytes() + " bytes): "
                + torn.reason() + ". A write cut short like this by a crash was never acknowledged; every record before it was replayed.");
    }

    /** A journal record: a command that failed when first run fails again the same way. */
    private void replayEntry(Document entry) {
        try {
            super.handleCommand(replayChannel, (String) entry.get("db"), (String) entry.get("cmd"), (Document) entry.get("q"));
        } catch (RuntimeException e) {
            // Duplicate key and the like: it failed this way when it was first run.
        }
    }

    /** A snapshot record: it was taken from data that existed, so any failure is an error. */
    private String applySnapshotEntry(Document entry) {
        try {
            Document result = super.handleCommand(replayChannel, (String) entry.get("db"), (String) entry.get("cmd"), (Document) entry.get("q"));
            if (result.containsKey("writeErrors")) return String.valueOf(result.get("writeErrors"));
            Object ok = result.get("ok");
            if (!(ok instanceof Number number) || number.doubleValue() != 1.0) return result.toString();
            return null;
        } catch (RuntimeException e) {
            return e.toString();
        }
    }

    // ---- writes ----

    @Override
    public Document handleCommand(Channel channel, String databaseName, String command, Document query) {
        String name = command.toLowerCase(Locale.ROOT);
        if (!WRITES.contains(name)) return super.handleCommand(channel, databaseName, command, query);
        Document result = null;
        Throwable failure = null;
        long durableAt = -1;
        synchronized (writeLock) {
            try {
                result = super.handleCommand(channel, databaseName, command, query);
            } catch (RuntimeException | Error e) {
                failure = e;
            }
            // Also when it failed: an unordered insert may have stored some documents.
            if (!changedNothing(name, result)) durableAt = append(databaseName, command, query);
            if (shouldCompact()) compact();
        }
        if (durableAt >= 0) {
            try {
                sync.awaitDurable(durableAt);
            } catch (IOException e) {
                halt("journal fsync failed: " + e);
            }
        }
        if (failure instanceof RuntimeException runtime) throw runtime;
        if (failure instanceof Error error) throw error;
        return result;
    }

    /**
     * An update or delete that matched nothing left the data as it was: replaying it would only
     * cost time (the sweeper's periodic conditional updates are mostly such).
     */
    private static boolean changedNothing(String command, Document result) {
        if (result == null || result.containsKey("writeErrors") || result.containsKey("upserted")) return false;
        Object n;
        if (command.equals("update") || command.equals("delete")) n = result.get("n");
        else if (command.equals("findandmodify") && result.get("lastErrorObject") instanceof Document lastError) n = lastError.get("n");
        else return false;
        return n instanceof Number count && count.intValue() == 0;
    }

    /** Appends one record; returns the bytes appended since start, for JournalSync. */
    private long append(String databaseName, String command, Document query) {
        byte[] payload = JournalFiles.encode(new Document("db", databaseName).append("cmd", command).append("q", query));
        ByteBuffer record = RecordFormat.record(payload, payload.length);
        int length = record.remaining();
        try {
            JournalFiles.writeFully(journal, record);
        } catch (IOException e) {
            // The write is applied in memory but not on disk: going on would let them disagree.
            halt("journal append to " + journalPath + " failed: " + e);
        }
        journalBytes += length;
        return sync.appended(length);
    }

    // ---- compaction ----

    private boolean shouldCompact() {
        return journalBytes > Math.max(compactAfterBytes, snapshotBytes) && journalBytes > retryCompactionAt;
    }

    /**
     * Under the write lock: snapshot, then a fresh journal (see the class comment for crash
     * safety). Returns false when the snapshot could not be written (nothing was replaced).
     */
    private boolean compact() {
        long started = System.nanoTime();
        long next = generation + 1;
        long written;
        try {
            written = SnapshotFile.write(snapshotPath, next, this::writeState);
        } catch (IOException | RuntimeException e) {
            // Nothing was replaced: the old snapshot and journal still hold everything.
            retryCompactionAt = journalBytes + Math.max(compactAfterBytes, snapshotBytes);
            warn("compaction failed, the journal goes on growing (next try after " + retryCompactionAt + " bytes): " + e);
            try {
                Files.deleteIfExists(JournalFiles.temporaryOf(snapshotPath));
            } catch (IOException ignored) {
                // Start-up removes it.
            }
            return false;
        }
        try {
            // From here the snapshot holds every write: the fresh journal must replace the old one.
            JournalFiles.createJournal(journalPath, next);
            FileChannel fresh = FileChannel.open(journalPath, StandardOpenOption.READ, StandardOpenOption.WRITE);
            fresh.position(fresh.size());
            FileChannel old = journal;
            journal = fresh;
            sync.switchTo(fresh);
            old.close();
            journalBytes = fresh.size();
        } catch (IOException e) {
            halt("compaction could not start a fresh journal after writing snapshot generation " + next + ": " + e);
        }
        generation = next;
        snapshotBytes = written;
        retryCompactionAt = 0;
        log("compacted into a snapshot of " + written + " bytes (generation " + next + ") in " + (System.nanoTime() - started) / 1_000_000 + " ms");
        return true;
    }

    /** The whole data set as create, createIndexes and batched insert commands. */
    private void writeState(SnapshotFile.EntrySink sink) throws IOException {
        for (String databaseName : new TreeSet<>(listDatabaseNames())) {
            if (databaseName.equals(OPLOG_DATABASE)) continue;
            for (Document collection : firstBatch(super.handleCommand(replayChannel, databaseName, "listCollections", new Document("listCollections", 1)))) {
                String name = (String) collection.get("name");
                if (name.startsWith("system.")) continue;
                Document create = new Document("create", name);
                if (collection.get("options") instanceof Document options) create.putAll(options);
                sink.accept(entry(databaseName, "create", create));
                List<Document> indexes = new ArrayList<>();
                for (Document index : firstBatch(super.handleCommand(replayChannel, databaseName, "listIndexes", new Document("listIndexes", name)))) {
                    if ("_id_".equals(index.get("name"))) continue;
                    Document spec = new Document(index);
                    spec.remove("v");
                    spec.remove("ns");
                    indexes.add(spec);
                }
                if (!indexes.isEmpty()) sink.accept(entry(databaseName, "createIndexes", new Document("createIndexes", name).append("indexes", indexes)));
                writeDocuments(sink, databaseName, name, resolveDatabase(databaseName).resolveCollection(name, true));
            }
        }
    }

    private static void writeDocuments(SnapshotFile.EntrySink sink, String databaseName, String name, MongoCollection<?> collection) throws IOException {
        List<Document> batch = new ArrayList<>();
        long batchBytes = 0;
        for (Document document : collection.queryAll()) {
            batch.add(document);
            batchBytes += JournalFiles.encode(document).length;
            if (batch.size() >= SNAPSHOT_BATCH_DOCUMENTS || batchBytes >= SNAPSHOT_BATCH_BYTES) {
                sink.accept(insertEntry(databaseName, name, batch));
                batch = new ArrayList<>();
                batchBytes = 0;
            }
        }
        if (!batch.isEmpty()) sink.accept(insertEntry(databaseName, name, batch));
    }

    private static Document insertEntry(String databaseName, String name, List<Document> documents) {
        return entry(databaseName, "insert", new Document("insert", name).append("documents", documents).append("ordered", true));
    }

    private static Document entry(String databaseName, String command, Document query) {
        return new Document("db", databaseName).append("cmd", command).append("q", query);
    }

    @SuppressWarnings("unchecked")
    private static List<Document> firstBatch(Document response) {
        Document cursor = (Document) response.get("cursor");
        // The memory backend answers these listings in one batch; more would be missed silently.
        if (((Number) cursor.get("id")).longValue() != 0) throw new IllegalStateException("listing answered in more than one batch: " + response);
        return (List<Document>) cursor.get("firstBatch");
    }

    // ---- shared ----

    /** The start's recovery report and compactions: stdout, which whoever started the server reads at start. */
    static void log(String message) {
        System.out.println("journal: " + message);
        System.out.flush();
    }

    /**
     * Trouble after start: stderr, the server's log file when it has one (LocalMongoServer). Its
     * stdout is a pipe nobody reads once `npm start`, which detaches it, has gone.
     */
    static void warn(String message) {
        System.err.println("journal: WARNING: " + message);
        System.err.flush();
    }

    /** Stops the process at once: used when memory and the journal could otherwise disagree. */
    static void halt(String message) {
        System.err.println("journal: " + message + ". The server stops now so that memory and disk cannot disagree; the files are consistent.");
        System.err.flush();
        Runtime.getRuntime().halt(3);
    }

    @Override
    public void close() {
        super.close();
        synchronized (writeLock) {
            try {
                sync.close();
                journal.close();
            } catch (IOException e) {
                // Closing at exit: nothing left to do with it.
            }
        }
    }
}
