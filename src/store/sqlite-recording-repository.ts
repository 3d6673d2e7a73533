import type Database from 'better-sqlite3';
import type { RecordingPosition, RecordingRecord, RecordingRepository, RecordingTranscript, TranscriptStatus } from './store.js';

/** The columns of a recording under the names of {@link RecordingRecord}, the transcript's flat. */
const COLUMNS = `id, call_id AS callId, route, caller, called, language, created_at AS createdAt, duration_seconds AS durationSeconds,
  size_bytes AS sizeBytes, sample_rate_hz AS sampleRateHz, ended_by AS endedBy,
  transcript_status AS status, transcript_text AS text, transcript_confidence AS confidence`;

type RecordingRow = Omit<RecordingRecord, 'transcript'> & RecordingTranscript;

function toRecord({ status, text, confidence, ...fields }: RecordingRow): RecordingRecord {
  return { ...fields, transcript: { status, text, confidence } };
}

/** The index of recordings in the embedded store. */
export class SqliteRecordingRepository implements RecordingRepository {
  private readonly insertStatement;
  private readonly byId;
  private readonly newest;
  private readonly newestBefore;
  private readonly transcriptStatement;
  private readonly deleteStatement;
  private readonly oldest;
  private readonly byStatus;

  constructor(db: Database.Database) {
    this.insertStatement = db.prepare(
      `INSERT INTO recordings (id, call_id, route, caller, called, language, created_at, duration_seconds, size_bytes, sample_rate_hz,
         ended_by, transcript_status, transcript_text, transcript_confidence)
       VALUES (@id, @callId, @route, @caller, @called, @language, @createdAt, @durationSeconds, @sizeBytes, @sampleRateHz,
         @endedBy, @status, @text, @confidence)`,
    );
    this.byId = db.prepare<[string], RecordingRow>(`SELECT ${COLUMNS} FROM recordings WHERE id = ?`);
    this.newest = db.prepare<[number], RecordingRow>(`SELECT ${COLUMNS} FROM recordings ORDER BY created_at DESC, id DESC LIMIT ?`);
    // The row-value comparison walks the (created_at, id) index from the cursor down.
    this.newestBefore = db.prepare<[string, string, number], RecordingRow>(
      `SELECT ${COLUMNS} FROM recordings WHERE (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?`,
    );
    this.transcriptStatement = db.prepare(
      'UPDATE recordings SET transcript_status = @status, transcript_text = @text, transcript_confidence = @confidence WHERE id = @id',
    );
    this.deleteStatement = db.prepare<[string]>('DELETE FROM recordings WHERE id = ?');
    this.oldest = db.prepare<[string, number], { id: string }>('SELECT id FROM recordings WHERE created_at <= ? ORDER BY created_at, id LIMIT ?');
    this.byStatus = db.prepare<[string], RecordingRow>(`SELECT ${COLUMNS} FROM recordings WHERE transcript_status = ? ORDER BY created_at, id`);
  }

  async insert(record: RecordingRecord): Promise<void> {
    const { transcript, ...fields } = record;
    this.insertStatement.run({ ...fields, ...transcript });
  }

  async findById(id: string): Promise<RecordingRecord | undefined> {
    const row = this.byId.get(id);
    return row && toRecord(row);
  }

  async page(limit: number, before?: RecordingPosition): Promise<RecordingRecord[]> {
    const rows = before ? this.newestBefore.all(before.createdAt, before.id, limit) : this.newest.all(limit);
    return rows.map(toRecord);
  }

  async setTranscript(id: string, transcript: RecordingTranscript): Promise<void> {
    this.transcriptStatement.run({ id, ...transcript });
  }

  async delete(id: string): Promise<boolean> {
    return this.deleteStatement.run(id).changes > 0;
  }

  async createdUpTo(cutoff: string, limit: number): Promise<string[]> {
    return this.oldest.all(cutoff, limit).map((row) => row.id);
  }

  async withTranscriptStatus(status: TranscriptStatus): Promise<RecordingRecord[]> {
    return this.byStatus.all(status).map(toRecord);
  }
}
