// Runs SQL scripts on a DuckDB database with DuckDB's node client
// (@duckdb/node-api), for notebooks_test.go: a newer DuckDB than the one
// traceduck links must read what traceduck writes.
//
// Usage: node duckdb_client.cjs MODULE_DIR < request.json
// MODULE_DIR holds node_modules/@duckdb/node-api. The request is
//   {"db": PATH, "access_mode": "READ_ONLY" | "READ_WRITE",
//    "scripts": [{"name": N, "statements": [SQL, ...]}, ...]}
// Each script runs on a connection of its own (its temporary views and
// variables are its own, as in a notebook's session). The answer, on
// standard output:
//   {"version": DuckDB's version, "package": the package's version,
//    "scripts": [{"name": N, "results": [{"columns": [...], "types": [...],
//                 "rows": [[...], ...]} or {"error": MESSAGE}, ...]}]}
// Values are in the client's JSON form: BIGINT, HUGEINT and DECIMAL as
// strings, DOUBLE as a number (NaN and infinities as strings), lists as
// arrays, structs as objects.
'use strict';
const path = require('path');
const fs = require('fs');

const moduleDir = process.argv[2];
const { DuckDBInstance } = require(path.join(moduleDir, 'node_modules', '@duckdb', 'node-api'));
const pkg = JSON.parse(fs.readFileSync(path.join(moduleDir, 'node_modules', '@duckdb', 'node-api', 'package.json'), 'utf8'));

async function main() {
  const request = JSON.parse(fs.readFileSync(0, 'utf8'));
  const instance = await DuckDBInstance.create(request.db, { access_mode: request.access_mode });
  const answer = { package: pkg.version, scripts: [] };
  {
    const con = await instance.connect();
    answer.version = (await con.runAndReadAll('SELECT version()')).getRows()[0][0];
    con.closeSync();
  }
  for (const script of request.scripts) {
    const con = await instance.connect();
    const results = [];
    for (const sql of script.statements) {
      try {
        const reader = await con.runAndReadAll(sql);
        results.push({
          columns: reader.columnNames(),
          types: reader.columnTypes().map(String),
          rows: reader.getRowsJson(),
        });
      } catch (e) {
        results.push({ error: String(e && e.message ? e.message : e) });
      }
    }
    con.closeSync();
    answer.scripts.push({ name: script.name, results });
  }
  instance.closeSync();
  process.stdout.write(JSON.stringify(answer));
}

main().catch((e) => {
  process.stderr.write(String(e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
