//! The nine tables of the TPC-C specification (clause 1.3) and their initial population
//! (clause 4.3.3.1), loaded in batches of many rows per INSERT: one statement carries a
//! thousand rows, so the load is bound by the server's inserts, not by round trips.

use super::gen::{self, Gen};
use super::sql::Conn;
use crate::db::backend::Endpoint;
use anyhow::{anyhow, Result};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// The tables, in the order they are dropped on a failed load and listed for the settle.
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// The schema, in SQL both servers take. Primary keys are made with the tables (rows arrive
/// in key order); the two secondary indexes after the load.
const CREATE: [&str; 9] = [
    "CREATE TABLE warehouse (w_id INT NOT NULL, w_name VARCHAR(10), w_street_1 VARCHAR(20), \
     w_street_2 VARCHAR(20), w_city VARCHAR(20), w_state CHAR(2), w_zip CHAR(9), \
     w_tax DECIMAL(4,4), w_ytd DECIMAL(12,2), PRIMARY KEY (w_id))",
    "CREATE TABLE district (d_id INT NOT NULL, d_w_id INT NOT NULL, d_name VARCHAR(10), \
     d_street_1 VARCHAR(20), d_street_2 VARCHAR(20), d_city VARCHAR(20), d_state CHAR(2), \
     d_zip CHAR(9), d_tax DECIMAL(4,4), d_ytd DECIMAL(12,2), d_next_o_id INT, \
     PRIMARY KEY (d_w_id, d_id))",
    "CREATE TABLE customer (c_id INT NOT NULL, c_d_id INT NOT NULL, c_w_id INT NOT NULL, \
     c_first VARCHAR(16), c_middle CHAR(2), c_last VARCHAR(16), c_street_1 VARCHAR(20), \
     c_street_2 VARCHAR(20), c_city VARCHAR(20), c_state CHAR(2), c_zip CHAR(9), \
     c_phone CHAR(16), c_since TIMESTAMP, c_credit CHAR(2), c_credit_lim DECIMAL(12,2), \
     c_discount DECIMAL(4,4), c_balance DECIMAL(12,2), c_ytd_payment DECIMAL(12,2), \
     c_payment_cnt INT, c_delivery_cnt INT, c_data VARCHAR(500), \
     PRIMARY KEY (c_w_id, c_d_id, c_id))",
    "CREATE TABLE history (h_c_id INT, h_c_d_id INT, h_c_w_id INT, h_d_id INT, h_w_id INT, \
     h_date TIMESTAMP, h_amount DECIMAL(6,2), h_data VARCHAR(24))",
    "CREATE TABLE new_order (no_o_id INT NOT NULL, no_d_id INT NOT NULL, no_w_id INT NOT NULL, \
     PRIMARY KEY (no_w_id, no_d_id, no_o_id))",
    "CREATE TABLE orders (o_id INT NOT NULL, o_d_id INT NOT NULL, o_w_id INT NOT NULL, \
     o_c_id INT, o_entry_d TIMESTAMP, o_carrier_id INT, o_ol_cnt INT, o_all_local INT, \
     PRIMARY KEY (o_w_id, o_d_id, o_id))",
    "CREATE TABLE order_line (ol_o_id INT NOT NULL, ol_d_id INT NOT NULL, ol_w_id INT NOT NULL, \
     ol_number INT NOT NULL, ol_i_id INT, ol_supply_w_id INT, ol_delivery_d TIMESTAMP NULL, \
     ol_quantity INT, ol_amount DECIMAL(6,2), ol_dist_info CHAR(24), \
     PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number))",
    "CREATE TABLE item (i_id INT NOT NULL, i_im_id INT, i_name VARCHAR(24), \
     i_price DECIMAL(5,2), i_data VARCHAR(50), PRIMARY KEY (i_id))",
    "CREATE TABLE stock (s_i_id INT NOT NULL, s_w_id INT NOT NULL, s_quantity INT, \
     s_dist_01 CHAR(24), s_dist_02 CHAR(24), s_dist_03 CHAR(24), s_dist_04 CHAR(24), \
     s_dist_05 CHAR(24), s_dist_06 CHAR(24), s_dist_07 CHAR(24), s_dist_08 CHAR(24), \
     s_dist_09 CHAR(24), s_dist_10 CHAR(24), s_ytd INT, s_order_cnt INT, s_remote_cnt INT, \
     s_data VARCHAR(50), PRIMARY KEY (s_w_id, s_i_id))",
];

/// Payment by last name and Order-Status's last order of a customer.
const INDEXES: [&str; 2] = [
    "CREATE INDEX customer_name ON customer (c_w_id, c_d_id, c_last, c_first)",
    "CREATE INDEX orders_customer ON orders (o_w_id, o_d_id, o_c_id, o_id)",
];

/// Rows per INSERT.
const BATCH: usize = 1000;

/// Rows of one table gathered into multi-row INSERTs.
struct Batch<'a> {
    conn: &'a mut Conn,
    table: &'static str,
    sql: String,
    rows: usize,
    loaded: &'a AtomicU64,
}

impl<'a> Batch<'a> {
    fn new(conn: &'a mut Conn, table: &'static str, loaded: &'a AtomicU64) -> Batch<'a> {
        Batch {
            conn,
            table,
            sql: String::new(),
            rows: 0,
            loaded,
        }
    }

    /// One row, its values already as SQL literals.
    fn row(&mut self, values: std::fmt::Arguments) -> Result<()> {
        match self.rows {
            0 => {
                let _ = write!(self.sql, "INSERT INTO {} VALUES (", self.table);
            }
            _ => self.sql.push_str(",("),
        }
        let _ = self.sql.write_fmt(values);
        self.sql.push(')');
        self.rows += 1;
        if self.rows == BATCH {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.rows > 0 {
            self.conn
                .run(&self.sql)
                .map_err(|e| anyhow!("loading {}: {e}", self.table))?;
            self.loaded.fetch_add(self.rows as u64, Ordering::Relaxed);
            self.sql.clear();
            self.rows = 0;
        }
        Ok(())
    }
}

/// The tables made, empty.
pub fn create(conn: &mut Conn) -> Result<()> {
    for sql in CREATE {
        conn.run(sql)?;
    }
    Ok(())
}

/// The secondary indexes, after the load.
pub fn index(conn: &mut Conn) -> Result<()> {
    for sql in INDEXES {
        conn.run(sql)?;
    }
    Ok(())
}

/// The item table: 100,000 items.
pub fn load_items(ep: &Endpoint, loaded: &AtomicU64) -> Result<()> {
    let mut conn = Conn::open(ep)?;
    let mut g = Gen::new(1);
    let mut b = Batch::new(&mut conn, "item", loaded);
    for i in 1..=gen::ITEMS {
        let (im, name, price, data) = (
            g.int(1, 10_000),
            g.astring(14, 24),
            g.money(100, 10_000, 2),
            g.data(26, 50),
        );
        b.row(format_args!("{i},{im},'{name}',{price},'{data}'"))?;
    }
    b.flush()
}

/// Warehouse `w` and everything that belongs to it: its stock, districts, customers with
/// their history, orders with their lines, and the undelivered new orders.
pub fn load_warehouse(ep: &Endpoint, w: u64, loaded: &AtomicU64) -> Result<()> {
    let mut conn = Conn::open(ep)?;
    let mut g = Gen::new(1000 + w);
    let addr = |g: &mut Gen| {
        format!(
            "'{}','{}','{}','{}','{}'",
            g.astring(10, 20),
            g.astring(10, 20),
            g.astring(10, 20),
            g.astring(2, 2).to_uppercase(),
            g.zip()
        )
    };
    {
        let (name, a, tax) = (g.astring(6, 10), addr(&mut g), g.money(0, 2000, 4));
        let mut b = Batch::new(&mut conn, "warehouse", loaded);
        b.row(format_args!("{w},'{name}',{a},{tax},300000.00"))?;
        b.flush()?;
    }
    {
        let mut b = Batch::new(&mut conn, "stock", loaded);
        for i in 1..=gen::ITEMS {
            let q = g.int(10, 100);
            let dists: Vec<String> = (0..10)
                .map(|_| format!("'{}'", g.astring(24, 24)))
                .collect();
            let data = g.data(26, 50);
            b.row(format_args!(
                "{i},{w},{q},{},0,0,0,'{data}'",
                dists.join(",")
            ))?;
        }
        b.flush()?;
    }
    for d in 1..=gen::DISTRICTS {
        let (name, a, tax) = (g.astring(6, 10), addr(&mut g), g.money(0, 2000, 4));
        {
            let mut b = Batch::new(&mut conn, "district", loaded);
            b.row(format_args!(
                "{d},{w},'{name}',{a},{tax},30000.00,{}",
                gen::CUSTOMERS + 1
            ))?;
            b.flush()?;
        }
        {
            let mut b = Batch::new(&mut conn, "customer", loaded);
            for c in 1..=gen::CUSTOMERS {
                let last = match c {
                    1..=1000 => gen::last_name(c - 1),
                    _ => gen::last_name(g.nurand(255, 0, 999, gen::C_LAST_LOAD)),
                };
                let credit = if g.int(1, 10) == 1 { "BC" } else { "GC" };
                let (first, a, phone, disc, data) = (
                    g.astring(8, 16),
                    addr(&mut g),
                    g.nstring(16),
                    g.money(0, 5000, 4),
                    g.astring(300, 500),
                );
                b.row(format_args!(
                "{c},{d},{w},'{first}','OE','{last}',{a},'{phone}',CURRENT_TIMESTAMP,'{credit}',50000.00,{disc},-10.00,10.00,1,0,'{data}'"
            ))?;
            }
            b.flush()?;
        }
        {
            let mut b = Batch::new(&mut conn, "history", loaded);
            for c in 1..=gen::CUSTOMERS {
                let data = g.astring(12, 24);
                b.row(format_args!(
                    "{c},{d},{w},{d},{w},CURRENT_TIMESTAMP,10.00,'{data}'"
                ))?;
            }
            b.flush()?;
        }
        // Orders: one per customer, the customers in a random order.
        let mut customers: Vec<u64> = (1..=gen::CUSTOMERS).collect();
        g.0.shuffle(&mut customers);
        let counts: Vec<u64> = (0..gen::CUSTOMERS).map(|_| g.int(5, 15)).collect();
        {
            let mut b = Batch::new(&mut conn, "orders", loaded);
            for o in 1..=gen::CUSTOMERS {
                let carrier = match o < gen::UNDELIVERED_FROM {
                    true => g.int(1, 10).to_string(),
                    false => "NULL".into(),
                };
                b.row(format_args!(
                    "{o},{d},{w},{},CURRENT_TIMESTAMP,{carrier},{},1",
                    customers[o as usize - 1],
                    counts[o as usize - 1]
                ))?;
            }
            b.flush()?;
        }
        {
            let mut b = Batch::new(&mut conn, "order_line", loaded);
            for o in 1..=gen::CUSTOMERS {
                for n in 1..=counts[o as usize - 1] {
                    let item = g.int(1, gen::ITEMS);
                    let (delivered, amount) = match o < gen::UNDELIVERED_FROM {
                        true => ("CURRENT_TIMESTAMP", "0.00".to_string()),
                        false => ("NULL", g.money(1, 999_999, 2)),
                    };
                    let info = g.astring(24, 24);
                    b.row(format_args!(
                        "{o},{d},{w},{n},{item},{w},{delivered},5,{amount},'{info}'"
                    ))?;
                }
            }
            b.flush()?;
        }
        {
            let mut b = Batch::new(&mut conn, "new_order", loaded);
            for o in gen::UNDELIVERED_FROM..=gen::CUSTOMERS {
                b.row(format_args!("{o},{d},{w}"))?;
            }
            b.flush()?;
        }
    }
    Ok(())
}
