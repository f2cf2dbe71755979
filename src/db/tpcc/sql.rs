//! One connection of the TPC-C-derived driver to either server, in each server's text
//! protocol: statements are sent as text and rows come back as text, so one body of SQL and
//! one set of transactions serve PostgreSQL and MariaDB. The values the driver puts into its
//! statements are numbers and strings it generated itself (letters and digits only), never
//! anything typed by a user.

use crate::db::backend::Endpoint;
use anyhow::{anyhow, Context, Result};
use mysql::prelude::Queryable;

/// A statement's rows, each column as text (`None` for NULL).
pub type Rows = Vec<Vec<Option<String>>>;

/// Why a statement failed: a conflict with another terminal that a new attempt resolves
/// (a deadlock, a serialization failure, a lock wait timeout), a New-Order's unused item
/// (its procedure rolled back, as the specification asks), or anything else.
#[derive(Debug)]
pub enum SqlError {
    Retry(String),
    UnusedItem(String),
    Fatal(String),
}

impl std::fmt::Display for SqlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SqlError::Retry(m) | SqlError::UnusedItem(m) | SqlError::Fatal(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for SqlError {}

/// One open connection.
pub enum Conn {
    Pg(Box<postgres::Client>),
    My(Box<mysql::Conn>),
}

/// PostgreSQL's SQLSTATEs a terminal answers by trying again: serialization_failure and
/// deadlock_detected.
const PG_RETRY: [&str; 2] = ["40001", "40P01"];
/// The SQLSTATE a New-Order's procedure raises for its unused item (procs.rs), on both servers.
pub const UNUSED_ITEM: &str = "IG001";
/// MariaDB's errors a terminal answers by trying again: ER_LOCK_DEADLOCK and
/// ER_LOCK_WAIT_TIMEOUT.
const MY_RETRY: [u16; 2] = [1213, 1205];

impl Conn {
    /// A connection to the endpoint's database over its socket.
    pub fn open(ep: &Endpoint) -> Result<Conn> {
        match ep {
            Endpoint::Postgres {
                socket_dir,
                port,
                user,
                database,
            } => {
                let c = postgres::Config::new()
                    .host_path(socket_dir)
                    .port(*port)
                    .user(user)
                    .dbname(database)
                    .application_name("iogauge tpcc")
                    .connect(postgres::NoTls)
                    .with_context(|| {
                        format!("connecting to PostgreSQL at {}", socket_dir.display())
                    })?;
                Ok(Conn::Pg(Box::new(c)))
            }
            Endpoint::Mariadb {
                socket,
                user,
                database,
            } => {
                let opts = mysql::OptsBuilder::new()
                    .socket(Some(socket.display().to_string()))
                    .user(Some(user))
                    .db_name(Some(database))
                    .prefer_socket(true);
                let c = mysql::Conn::new(opts)
                    .with_context(|| format!("connecting to MariaDB at {}", socket.display()))?;
                Ok(Conn::My(Box::new(c)))
            }
        }
    }

    /// The rows `sql` returns.
    pub fn rows(&mut self, sql: &str) -> Result<Rows, SqlError> {
        match self {
            Conn::Pg(c) => {
                let mut out = Vec::new();
                for m in c.simple_query(sql).map_err(pg_error)? {
                    if let postgres::SimpleQueryMessage::Row(r) = m {
                        out.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
                    }
                }
                Ok(out)
            }
            Conn::My(c) => {
                let rows: Vec<mysql::Row> = c.query(sql).map_err(my_error)?;
                Ok(rows
                    .into_iter()
                    .map(|r| r.unwrap().into_iter().map(my_text).collect())
                    .collect())
            }
        }
    }

    /// Runs `sql` (one statement); the rows it changed.
    pub fn exec(&mut self, sql: &str) -> Result<u64, SqlError> {
        match self {
            Conn::Pg(c) => {
                let mut n = 0;
                for m in c.simple_query(sql).map_err(pg_error)? {
                    if let postgres::SimpleQueryMessage::CommandComplete(k) = m {
                        n = k;
                    }
                }
                Ok(n)
            }
            Conn::My(c) => {
                c.query_drop(sql).map_err(my_error)?;
                Ok(c.affected_rows())
            }
        }
    }

    /// Calls the stored procedure `name` with `args` (SQL literals, comma-separated): one
    /// round trip, one transaction.
    pub fn call(&mut self, name: &str, args: std::fmt::Arguments) -> Result<(), SqlError> {
        let sql = match self {
            Conn::Pg(_) => format!("SELECT {name}({args})"),
            Conn::My(_) => format!("CALL {name}({args})"),
        };
        self.exec(&sql).map(|_| ())
    }

    /// A list of numbers as one literal a procedure takes: an array on PostgreSQL, a
    /// comma-separated string on MariaDB (whose procedures have no arrays).
    pub fn list(&self, xs: impl Iterator<Item = u64>) -> String {
        let joined = xs.map(|x| x.to_string()).collect::<Vec<_>>().join(",");
        match self {
            Conn::Pg(_) => format!("'{{{joined}}}'"),
            Conn::My(_) => format!("'{joined}'"),
        }
    }

    /// The first column of the first row, as a number; an error when there is none.
    pub fn number(&mut self, sql: &str) -> Result<f64, SqlError> {
        self.rows(sql)?
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| SqlError::Fatal(format!("no number from: {sql}")))
    }

    /// Runs `sql` for its effect, an error as anyhow's (for the loader and the checks).
    pub fn run(&mut self, sql: &str) -> Result<()> {
        self.exec(sql).map(|_| ()).map_err(|e| anyhow!("{e}"))
    }
}

fn pg_error(e: postgres::Error) -> SqlError {
    let code = e.code().map(|c| c.code().to_string());
    let text = match e.as_db_error() {
        Some(d) => format!("PostgreSQL: {} ({})", d.message(), d.code().code()),
        None => format!("PostgreSQL: {e}"),
    };
    match code {
        Some(c) if PG_RETRY.contains(&c.as_str()) => SqlError::Retry(text),
        Some(c) if c == UNUSED_ITEM => SqlError::UnusedItem(text),
        _ => SqlError::Fatal(text),
    }
}

fn my_error(e: mysql::Error) -> SqlError {
    match e {
        mysql::Error::MySqlError(m) if MY_RETRY.contains(&m.code) => {
            SqlError::Retry(format!("MariaDB: {} ({})", m.message, m.code))
        }
        mysql::Error::MySqlError(m) if m.state == UNUSED_ITEM => {
            SqlError::UnusedItem(format!("MariaDB: {} ({})", m.message, m.state))
        }
        mysql::Error::MySqlError(m) => {
            SqlError::Fatal(format!("MariaDB: {} ({})", m.message, m.code))
        }
        e => SqlError::Fatal(format!("MariaDB: {e}")),
    }
}

/// A value of MariaDB's text protocol as text.
fn my_text(v: mysql::Value) -> Option<String> {
    use mysql::Value;
    match v {
        Value::NULL => None,
        Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Value::Int(i) => Some(i.to_string()),
        Value::UInt(u) => Some(u.to_string()),
        Value::Float(f) => Some(f.to_string()),
        Value::Double(d) => Some(d.to_string()),
        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
    }
}
