/** The index of recordings in the PostgreSQL store (table `recordings`, migration 2). */
import type pg from 'pg';
import type { RecordingPosition, RecordingRecord, RecordingRepository, RecordingTranscript, TranscriptStatus } from './store.js';

/** The columns of a recording under the names of {@link RecordingRecord}, the transcript's flat. */
const COLUMNS = `id, call_id AS "callId", route, caller, called, language, created_at AS "createdAt", duration_seconds AS "durationSeconds",
  size_bytes::float8 AS "sizeBytes", sample_rate_hz AS "sampleRateHz", ended_by AS "endedBy",
  transcript_status AS status, transcript_text AS text, transcript_confidence AS confidence`;

type RecordingRow = Omit<RecordingRecord, 'transcript'> & RecordingTranscript;

function toRecord({ status, text, confidence, ...fields }: RecordingRow): RecordingRecord {
  return { ...fields, transcript: { status, text, confidence } };
}

/** The index of recordings, shared by every instance that uses the database. */
export class PostgresRecordingRepository implements RecordingRepository {
  constructor(private readonly pool: pg.Pool) {}

  async insert(record: RecordingRecord): Promise<void> {
    const { transcript } = record;
    await this.pool.query(
      `INSERT INTO recordings (id, call_id, route, caller, called, language, created_at, duration_seconds, size_bytes, sample_rate_hz,
         ended_by, transcript_status, transcript_text, transcript_confidence)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        record.id,
        record.callId,
        record.route,
        record.caller,
        record.called,
        record.language,
        record.createdAt,
        record.durationSeconds,
        record.sizeBytes,
        record.sampleRateHz,
        record.endedBy,
        transcript.status,
        transcript.text,
        transcript.confidence,
      ],
    );
  }

  async findById(id: string): Promise<RecordingRecord | undefined> {
    const { rows } = await this.pool.query<RecordingRow>(`SELECT ${COLUMNS} FROM recordings WHERE id = $1`, [id]);
    return rows[0] && toRecord(rows[0]);
  }

  async page(limit: number, before?: RecordingPosition): Promise<RecordingRecord[]> {
    // The row-value comparison walks the (created_at, id) index from the cursor down.
    const { rows } = before
      ? await this.pool.query<RecordingRow>(`SELECT ${COLUMNS} FROM recordings WHERE (created_at, id) < ($1, $2) ORDER BY created_at DESC, id DESC LIMIT $3`, [
          before.createdAt,
          before.id,
          limit,
        ])
      : await this.pool.query<RecordingRow>(`SELECT ${COLUMNS} FROM recordings ORDER BY created_at DESC, id DESC LIMIT $1`, [limit]);
    return rows.map(toRecord);
  }

  async setTranscript(id: string, transcript: RecordingTranscript): Promise<void> {
    await this.pool.query('UPDATE recordings SET transcript_status = $2, transcript_text = $3, transcript_confidence = $4 WHERE id = $1', [
      id,
      transcript.status,
      transcript.text,
      transcript.confidence,
    ]);
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.pool.query('DELETE FROM recordings WHERE id = $1', [id]);
    return (result.rowCount ?? 0) > 0;
  }

  async createdUpTo(cutoff: string, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>('SELECT id FROM recordings WHERE created_at <= $1 ORDER BY created_at, id LIMIT $2', [
      cutoff,
      limit,
    ]);
    return rows.map((row) => row.id);
  }

  async withTranscriptStatus(status: TranscriptStatus): Promise<RecordingRecord[]> {
    const { rows } = await this.pool.query<RecordingRow>(`SELECT ${COLUMNS} FROM recordings WHERE transcript_status = $1 ORDER BY created_at, id`, [status]);
    return rows.map(toRecord);
  }
}
