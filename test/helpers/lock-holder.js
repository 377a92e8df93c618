// Another process that holds an exclusive (write) lock on a SQLite file for a while:
// node lock-holder.js <file> <milliseconds>. Prints "locked" once it holds the lock. With `stdin`
// for the milliseconds, it holds the lock until its standard input closes.
const sqlite3 = require('sqlite3');
const [file, ms] = process.argv.slice(2);
const db = new sqlite3.Database(file);
db.serialize(() => {
  db.run('PRAGMA busy_timeout = 10000');
  db.run('BEGIN EXCLUSIVE');
  db.run("UPDATE write_lock SET counter = counter + 1 WHERE name = 'accounts'", (err) => {
    if (err) {
      process.stderr.write(`lock-holder: ${err.message}\n`);
      process.exit(1);
    }
    process.stdout.write('locked\n');
    const release = () => db.run('COMMIT', () => db.close(() => process.exit(0)));
    if (ms === 'stdin') process.stdin.on('end', release).resume();
    else setTimeout(release, Number(ms));
  });
});
