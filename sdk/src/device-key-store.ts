// Where an app keeps its device key is the app's choice: the library needs only these three calls.

export interface DeviceKeyStore {
  load(): Promise<CryptoKeyPair | undefined>;
  save(keys: CryptoKeyPair): Promise<void>;
  clear(): Promise<void>;
}

/** Keeps the key for the life of the process (tests, servers, apps with their own persistence). */
export class MemoryDeviceKeyStore implements DeviceKeyStore {
  private keys: CryptoKeyPair | undefined;
  async load(): Promise<CryptoKeyPair | undefined> {
    return this.keys;
  }
  async save(keys: CryptoKeyPair): Promise<void> {
    this.keys = keys;
  }
  async clear(): Promise<void> {
    this.keys = undefined;
  }
}

const STORE = 'device-keys';
const RECORD = 'current';

/**
 * Keeps the key in the browser's IndexedDB. CryptoKey objects are stored as they are (structured
 * clone), so a non-extractable private key stays non-extractable: page scripts can sign with it but
 * never read it.
 */
export class IndexedDbDeviceKeyStore implements DeviceKeyStore {
  constructor(private readonly databaseName = 'svc-identity') {}

  private open(): Promise<IDBDatabase> {
    return new Promise((resolve, reject) => {
      const request = indexedDB.open(this.databaseName, 1);
      request.onupgradeneeded = () => request.result.createObjectStore(STORE);
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }

  private async run<T>(mode: IDBTransactionMode, operation: (store: IDBObjectStore) => IDBRequest): Promise<T> {
    const db = await this.open();
    try {
      return await new Promise<T>((resolve, reject) => {
        const request = operation(db.transaction(STORE, mode).objectStore(STORE));
        request.onsuccess = () => resolve(request.result as T);
        request.onerror = () => reject(request.error);
      });
    } finally {
      db.close();
    }
  }

  async load(): Promise<CryptoKeyPair | undefined> {
    return (await this.run<CryptoKeyPair | undefined>('readonly', (store) => store.get(RECORD))) ?? undefined;
  }
  async save(keys: CryptoKeyPair): Promise<void> {
    await this.run('readwrite', (store) => store.put(keys, RECORD));
  }
  async clear(): Promise<void> {
    await this.run('readwrite', (store) => store.delete(RECORD));
  }
}
