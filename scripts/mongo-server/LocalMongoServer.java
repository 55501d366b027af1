import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs mongo-java-server (a real MongoDB wire-protocol server) for local runs and tests,
 * because no mongod can be installed on these machines.
 *
 * Usage: java LocalMongoServer <host> <port|0> <memory|journal:/path/file|h2:/path/file.mv> [portFile]
 * journal: the memory backend with a write-ahead journal (durable, see JournaledMemoryBackend),
 *   tuned by -DlocalMongo.fsync=always|everysec|off (default everysec, see JournalSync) and
 *   -DlocalMongo.compactAfterBytes=<n> (default 256 KiB);
 * h2: mongo-java-server's H2 file backend (kept for comparison; see JournaledMemoryBackend).
 * -DlocalMongo.logFile=<path> sends what the server logs (stderr) to that file, kept under
 * -DlocalMongo.logMaxBytes (default 4 MiB) by RotatingServerLog; the level is slf4j-simple's
 * (-Dorg.slf4j.simpleLogger.defaultLogLevel, which scripts/local-services.ts sets to warn).
 * Prints one line "listening <connection-string>" once bound, and writes the port to portFile.
 * Exits with status 2 and the reason on stderr when its files are damaged (JournalRefusal).
 */
public final class LocalMongoServer {
    /**
     * About 12 000 single-field updates, about 0.4 s of replay's CPU here on top of about 0.7 s of
     * warm-up, so that a restart stays bounded whatever the history (docs/reliability.md).
     * scripts/local-services.ts repeats it for the benchmark.
     */
    private static final long DEFAULT_COMPACT_AFTER_BYTES = 256L * 1024;

    private static final long DEFAULT_LOG_MAX_BYTES = 4L * 1024 * 1024;

    /** The stderr the server was started with: whoever started it reads a refusal there, not in the log file. */
    private static final PrintStream STARTED_WITH_STDERR = System.err;

    public static void main(String[] args) throws Exception {
        String logFile = System.getProperty("localMongo.logFile");
        if (logFile != null && !logFile.isEmpty()) {
            long logMaxBytes = Long.parseLong(System.getProperty("localMongo.logMaxBytes", String.valueOf(DEFAULT_LOG_MAX_BYTES)));
            RotatingServerLog.redirectStderr(Path.of(logFile), logMaxBytes);
        }
        try {
            start(args);
        } catch (Throwable e) {
            // Whoever started the server waits for its first line and reads why it did not come on
            // the stderr it gave (a port in use, say), not in the log file.
            e.printStackTrace(STARTED_WITH_STDERR);
            if (System.err != STARTED_WITH_STDERR) e.printStackTrace();
            System.exit(1);
        }
        Thread.currentThread().join();
    }

    private static void start(String[] args) throws Exception {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 0;
        String backendSpec = args.length > 2 ? args[2] : "memory";
        MongoBackend backend;
        if (backendSpec.startsWith("journal:")) backend = openJournal(Path.of(backendSpec.substring(8)));
        else if (backendSpec.startsWith("h2:")) backend = new H2Backend(backendSpec.substring(3));
        else backend = new IdIndexedMemoryBackend();
        // No oplog: the service uses no change streams, and mongo-java-server keeps every oplog
        // entry in memory for good (a million writes held about a gigabyte and stalled the
        // server in garbage collection for longer than a client's socket timeout).
        MongoServer server = new MongoServer(backend);
        server.bind(host, port);
        InetSocketAddress address = server.getLocalAddress();
        // The H2 store is only consistent once closed, so close it on SIGTERM/SIGINT.
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        if (args.length > 3) {
            Path portFile = Path.of(args[3]);
            Path tmp = Path.of(args[3] + ".tmp");
            Files.writeString(tmp, Integer.toString(address.getPort()));
            Files.move(tmp, portFile, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        }
        System.out.println("listening mongodb://" + host + ":" + address.getPort());
        System.out.flush();
    }

    private static MongoBackend openJournal(Path file) throws Exception {
        JournalSync.Mode fsync;
        try {
            fsync = JournalSync.Mode.parse(System.getProperty("localMongo.fsync", "everysec"));
        } catch (IllegalArgumentException e) {
            return refuse(e.getMessage());
        }
        long compactAfterBytes = Long.parseLong(System.getProperty("localMongo.compactAfterBytes", String.valueOf(DEFAULT_COMPACT_AFTER_BYTES)));
        try {
            return new JournaledMemoryBackend(file, fsync, compactAfterBytes);
        } catch (JournalRefusal refusal) {
            return refuse(refusal.getMessage());
        }
    }

    private static MongoBackend refuse(String reason) {
        String line = "local MongoDB-wire server refuses to start: " + reason;
        STARTED_WITH_STDERR.println(line);
        STARTED_WITH_STDERR.flush();
        if (System.err != STARTED_WITH_STDERR) System.err.println(line);
        System.exit(2);
        return null;
    }
}
