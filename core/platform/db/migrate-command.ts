/** The command that brings the database's indexes and data to this version's declarations. */
export const MIGRATE_COMMAND = 'npm run migrate (node dist/scripts/migrate.js)';
