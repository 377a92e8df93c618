// Another process that holds an exclusive (write) lock on a SQLite file for a while:
// node lock-holder.js <file> <milliseconds>. Prints "locked" once it holds the lock. With `stdin`
// for the milliseconds, it holds the lock until its standard input closes.
const { DatabaseSync } = require('node:sqlite');
const [file, ms] = process.argv.slice(2);
const db = new DatabaseSync(file, { timeout: 10000 });
try {
  db.exec('BEGIN EXCLUSIVE');
  db.exec("UPDATE write_lock SET counter = counter + 1 WHERE name = 'accounts'");
} catch (err) {
  process.stderr.write(`lock-holder: ${err.message}\n`);
  process.exit(1);
}
process.stdout.write('locked\n');
const release = () => {
  db.exec('COMMIT');
  db.close();
  process.exit(0);
};
if (ms === 'stdin') process.stdin.on('end', release).resume();
else setTimeout(release, Number(ms));
