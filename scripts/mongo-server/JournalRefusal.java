import java.nio.file.Path;

/**
 * Why the server will not start on the files it was given, with what to do about it. Start-up
 * refuses rather than guess whenever going on would silently lose or invent acknowledged writes.
 */
final class JournalRefusal extends Exception {
    private static final long serialVersionUID = 1L;

    JournalRefusal(String message) {
        super(message);
    }

    static JournalRefusal damagedJournalRecord(Path journal, long offset, String reason, long bytesAfter, long recordsBefore) {
        return new JournalRefusal(
                "the journal " + journal + " is damaged at offset " + offset + ": " + reason + ", with " + bytesAfter
                        + " bytes after it that would be lost. Nothing was changed. To keep the " + recordsBefore
                        + " writes before the damage and lose the rest: keep a copy of the file, then `truncate -s " + offset + " "
                        + journal + "` and start again. To start empty: delete " + journal + " and " + JournalFiles.snapshotOf(journal) + ".");
    }

    static JournalRefusal damagedSnapshot(Path snapshot, Path journal, long offset, String reason) {
        return new JournalRefusal(
                "the snapshot " + snapshot + " is damaged at offset " + offset + ": " + reason
                        + ". A snapshot is renamed into place only once it is complete and on disk, so it was damaged afterwards"
                        + " (disk fault or edit). Nothing was changed. Restore it from a copy, or delete " + snapshot + " and "
                        + journal + " to start empty.");
    }

    static JournalRefusal snapshotEntryFailed(Path snapshot, long offset, String error) {
        return new JournalRefusal(
                "the snapshot " + snapshot + " could not be loaded: the record at offset " + offset + " failed (" + error
                        + "). Nothing was changed. Keep a copy of the files and report it; delete " + snapshot + " and its journal to start empty.");
    }

    static JournalRefusal unrelatedFiles(Path journal, String detail) {
        return new JournalRefusal(
                "the journal " + journal + " and its snapshot " + JournalFiles.snapshotOf(journal) + " do not belong together: " + detail
                        + ". Nothing was changed. Put back the matching file, or delete both to start empty.");
    }
}
