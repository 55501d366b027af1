// Reads and damages the local MongoDB-wire server's journal and snapshot files the way disks and
// crashes do, for the durability tests. Layout: scripts/mongo-server/RecordFormat.java.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { mongo } from 'mongoose';

export const FILE_HEADER_BYTES = 20;
const RECORD_HEADER_BYTES = 12;

export interface RecordPosition {
  offset: number;
  payloadBytes: number;
}

/** Where each record starts, read from the length fields alone (the files must be undamaged). */
export function recordPositions(file: string): RecordPosition[] {
  const bytes = readFileSync(file);
  const positions: RecordPosition[] = [];
  for (let offset = FILE_HEADER_BYTES; offset + RECORD_HEADER_BYTES <= bytes.length;) {
    const payloadBytes = bytes.readUInt32LE(offset);
    positions.push({ offset, payloadBytes });
    offset += RECORD_HEADER_BYTES + payloadBytes;
  }
  return positions;
}

export function generationOf(file: string): number {
  return Number(readFileSync(file).readBigInt64LE(8));
}

export function magicOf(file: string): string {
  return readFileSync(file).subarray(0, 8).toString('latin1');
}

/** Inverts every bit of one byte, as a bad sector or a stray write would. */
export function flipByte(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset] ^= 0xff;
  writeFileSync(file, bytes);
}

/** A copy of a data directory, so each test damages its own files. */
export function copyDirectory(source: string): string {
  const target = mkdtempSync(join(tmpdir(), 'mongo-journal-case-'));
  cpSync(source, target, { recursive: true });
  return target;
}

export interface DatabaseDump {
  collections: Record<string, { documents: unknown[]; indexes: unknown[] }>;
}

/** Every document (by `_id`) and every index of a database, to compare before and after a restart. */
export async function dumpDatabase(db: mongo.Db): Promise<DatabaseDump> {
  const collections: DatabaseDump['collections'] = {};
  const names = (await db.listCollections().toArray()).map((c) => c.name).sort();
  for (const name of names) {
    const collection = db.collection(name);
    const indexes = (await collection.listIndexes().toArray()).sort((a, b) => String(a.name).localeCompare(String(b.name)));
    collections[name] = { documents: await collection.find().sort({ _id: 1 }).toArray(), indexes };
  }
  return { collections };
}
