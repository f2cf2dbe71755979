//! The five transactions of the TPC-C specification (clause 2.4 to 2.8), each one database
//! transaction on one connection, with the inputs the specification draws for them. Their
//! SQL is the same on both servers; locks are taken in one order (a New-Order's stock rows by
//! item), so terminals wait for each other but rarely deadlock — and when they do, the caller
//! tries again.

use super::gen::{self, Gen};
use super::sql::{Conn, SqlError};
use std::fmt::Write as _;

/// The five kinds, in the standard mix's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    NewOrder = 0,
    Payment = 1,
    OrderStatus = 2,
    Delivery = 3,
    StockLevel = 4,
}

pub const KINDS: [Kind; 5] = [
    Kind::NewOrder,
    Kind::Payment,
    Kind::OrderStatus,
    Kind::Delivery,
    Kind::StockLevel,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::NewOrder => "New-Order",
            Kind::Payment => "Payment",
            Kind::OrderStatus => "Order-Status",
            Kind::Delivery => "Delivery",
            Kind::StockLevel => "Stock-Level",
        }
    }

    /// Its share of the standard mix, in percent (clause 5.2.3: Payment at least 43%, the
    /// other three at least 4% each, New-Order the rest).
    pub fn share(self) -> u32 {
        match self {
            Kind::NewOrder => 45,
            Kind::Payment => 43,
            _ => 4,
        }
    }

    /// Keying time and mean think time in seconds (clause 5.2.5.7).
    pub fn keying_think(self) -> (f64, f64) {
        match self {
            Kind::NewOrder => (18.0, 12.0),
            Kind::Payment => (3.0, 12.0),
            Kind::OrderStatus => (2.0, 10.0),
            Kind::Delivery | Kind::StockLevel => (2.0, 5.0),
        }
    }
}

/// A deck of 100 cards in the mix's shares, drawn in a shuffled order and shuffled again when
/// used up (the card deck of clause 5.2.4.2): every hundred transactions of a terminal hold the
/// mix exactly, so the measured mix does not wander with chance.
pub struct Deck {
    cards: Vec<Kind>,
    next: usize,
}

impl Deck {
    pub fn new() -> Deck {
        let cards = KINDS
            .iter()
            .flat_map(|&k| std::iter::repeat_n(k, k.share() as usize))
            .collect::<Vec<_>>();
        Deck {
            next: cards.len(),
            cards,
        }
    }

    pub fn draw(&mut self, g: &mut Gen) -> Kind {
        if self.next == self.cards.len() {
            g.0.shuffle(&mut self.cards);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// How a transaction ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Committed,
    /// A New-Order with an unused item, rolled back as the specification asks (1%).
    RolledBack,
}

/// A terminal's place: its home warehouse and district, and how many warehouses there are.
#[derive(Clone, Copy, Debug)]
pub struct Home {
    pub w: u64,
    pub d: u64,
    pub warehouses: u64,
}

/// Runs one transaction of `kind`, from BEGIN to COMMIT; an error leaves it rolled back.
pub fn run(c: &mut Conn, g: &mut Gen, home: Home, kind: Kind) -> Result<End, SqlError> {
    c.exec("BEGIN")?;
    let r = match kind {
        Kind::NewOrder => new_order(c, g, home),
        Kind::Payment => payment(c, g, home),
        Kind::OrderStatus => order_status(c, g, home),
        Kind::Delivery => delivery(c, g, home),
        Kind::StockLevel => stock_level(c, g, home),
    };
    match r {
        Ok(End::Committed) => {
            c.exec("COMMIT")?;
            Ok(End::Committed)
        }
        Ok(End::RolledBack) => {
            c.exec("ROLLBACK")?;
            Ok(End::RolledBack)
        }
        Err(e) => {
            let _ = c.exec("ROLLBACK");
            Err(e)
        }
    }
}

/// A customer of a district, by number (40%) or by last name (60%, clause 2.5.1.2): the
/// customer in the middle of those with the name, ordered by first name.
fn customer(c: &mut Conn, g: &mut Gen, w: u64, d: u64) -> Result<u64, SqlError> {
    if g.int(1, 100) <= 60 {
        let last = gen::last_name(g.nurand(255, 0, 999, gen::C_LAST_RUN));
        let ids = c.rows(&format!(
            "SELECT c_id FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = '{last}' ORDER BY c_first"
        ))?;
        if let Some(id) = ids
            .get(ids.len().saturating_sub(1) / 2)
            .and_then(|r| r[0].as_deref()?.parse().ok())
        {
            return Ok(id);
        }
    }
    Ok(g.nurand(1023, 1, gen::CUSTOMERS, gen::C_ID))
}

fn first_number(rows: &[Vec<Option<String>>], what: &str) -> Result<f64, SqlError> {
    rows.first()
        .and_then(|r| r.first().cloned().flatten())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| SqlError::Fatal(format!("{what}: no row")))
}

/// Clause 2.4: an order of 5 to 15 lines; 1% of them name an unused item and roll back.
fn new_order(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let (w, d) = (h.w, g.int(1, gen::DISTRICTS));
    let cust = g.nurand(1023, 1, gen::CUSTOMERS, gen::C_ID);
    let n = g.int(5, 15);
    let rollback = g.int(1, 100) == 1;
    let mut lines: Vec<(u64, u64, u64)> = (0..n)
        .map(|_| {
            let item = g.nurand(8191, 1, gen::ITEMS, gen::C_OL_I_ID);
            let supply = match h.warehouses > 1 && g.int(1, 100) == 1 {
                true => loop {
                    let o = g.int(1, h.warehouses);
                    if o != w {
                        break o;
                    }
                },
                false => w,
            };
            (supply, item, g.int(1, 10))
        })
        .collect();
    // Stock rows locked in one order, so two New-Orders cannot wait on each other in a circle.
    lines.sort_unstable();
    if rollback {
        // The last line names an item that does not exist.
        lines.last_mut().expect("5 to 15 lines").1 = gen::ITEMS + 1;
    }
    let all_local = lines.iter().all(|l| l.0 == w) as u8;
    c.rows(&format!(
        "SELECT c_discount, c_last, c_credit, w_tax FROM customer, warehouse WHERE w_id = {w} AND c_w_id = {w} AND c_d_id = {d} AND c_id = {cust}"
    ))?;
    let next = first_number(
        &c.rows(&format!(
            "SELECT d_next_o_id, d_tax FROM district WHERE d_w_id = {w} AND d_id = {d} FOR UPDATE"
        ))?,
        "district",
    )? as u64;
    c.exec(&format!(
        "UPDATE district SET d_next_o_id = {} WHERE d_w_id = {w} AND d_id = {d}",
        next + 1
    ))?;
    c.exec(&format!(
        "INSERT INTO orders VALUES ({next},{d},{w},{cust},CURRENT_TIMESTAMP,NULL,{n},{all_local})"
    ))?;
    c.exec(&format!("INSERT INTO new_order VALUES ({next},{d},{w})"))?;
    let mut insert = String::from("INSERT INTO order_line VALUES ");
    for (k, &(supply, item, qty)) in lines.iter().enumerate() {
        let found = c.rows(&format!(
            "SELECT i_price, i_name, i_data FROM item WHERE i_id = {item}"
        ))?;
        let Some(price) = found
            .first()
            .and_then(|r| r[0].as_deref()?.parse::<f64>().ok())
        else {
            return Ok(End::RolledBack);
        };
        let stock = c.rows(&format!(
            "SELECT s_quantity, s_dist_{d:02} FROM stock WHERE s_i_id = {item} AND s_w_id = {supply} FOR UPDATE"
        ))?;
        let row = stock
            .first()
            .ok_or_else(|| SqlError::Fatal(format!("stock of item {item}: no row")))?;
        let q: u64 = row[0].as_deref().and_then(|v| v.parse().ok()).unwrap_or(0);
        let q = if q >= qty + 10 { q - qty } else { q + 91 - qty };
        let info = row[1].clone().unwrap_or_default();
        c.exec(&format!(
            "UPDATE stock SET s_quantity = {q}, s_ytd = s_ytd + {qty}, s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + {} WHERE s_i_id = {item} AND s_w_id = {supply}",
            (supply != w) as u8
        ))?;
        if k > 0 {
            insert.push(',');
        }
        let _ = write!(
            insert,
            "({next},{d},{w},{},{item},{supply},NULL,{qty},{:.2},'{info}')",
            k + 1,
            price * qty as f64
        );
    }
    c.exec(&insert)?;
    Ok(End::Committed)
}

/// Clause 2.5: a payment of 1.00 to 5,000.00 by a customer of the home warehouse (85%) or
/// of another (15%).
fn payment(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let (w, d) = (h.w, g.int(1, gen::DISTRICTS));
    let (cw, cd) = match h.warehouses > 1 && g.int(1, 100) > 85 {
        true => (
            loop {
                let o = g.int(1, h.warehouses);
                if o != w {
                    break o;
                }
            },
            g.int(1, gen::DISTRICTS),
        ),
        false => (w, d),
    };
    let amount = g.money(100, 500_000, 2);
    let cust = customer(c, g, cw, cd)?;
    c.exec(&format!(
        "UPDATE warehouse SET w_ytd = w_ytd + {amount} WHERE w_id = {w}"
    ))?;
    c.rows(&format!(
        "SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip FROM warehouse WHERE w_id = {w}"
    ))?;
    c.exec(&format!(
        "UPDATE district SET d_ytd = d_ytd + {amount} WHERE d_w_id = {w} AND d_id = {d}"
    ))?;
    c.rows(&format!(
        "SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip FROM district WHERE d_w_id = {w} AND d_id = {d}"
    ))?;
    let row = c.rows(&format!(
        "SELECT c_first, c_last, c_credit, c_balance FROM customer WHERE c_w_id = {cw} AND c_d_id = {cd} AND c_id = {cust} FOR UPDATE"
    ))?;
    let bad_credit = row
        .first()
        .and_then(|r| r[2].as_deref())
        .is_some_and(|v| v == "BC");
    let set_data = match bad_credit {
        // A customer with bad credit has the payment written into c_data (its first 500
        // characters kept).
        true => format!(
            ", c_data = SUBSTR(CONCAT('{cust} {cd} {cw} {d} {w} {amount} ', c_data), 1, 500)"
        ),
        false => String::new(),
    };
    c.exec(&format!(
        "UPDATE customer SET c_balance = c_balance - {amount}, c_ytd_payment = c_ytd_payment + {amount}, c_payment_cnt = c_payment_cnt + 1{set_data} WHERE c_w_id = {cw} AND c_d_id = {cd} AND c_id = {cust}"
    ))?;
    let data = g.astring(12, 24);
    c.exec(&format!(
        "INSERT INTO history VALUES ({cust},{cd},{cw},{d},{w},CURRENT_TIMESTAMP,{amount},'{data}')"
    ))?;
    Ok(End::Committed)
}

/// Clause 2.6: a customer's balance and their last order with its lines. Reads only.
fn order_status(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let (w, d) = (h.w, g.int(1, gen::DISTRICTS));
    let cust = customer(c, g, w, d)?;
    c.rows(&format!(
        "SELECT c_balance, c_first, c_middle, c_last FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {cust}"
    ))?;
    let last = c.rows(&format!(
        "SELECT o_id, o_entry_d, o_carrier_id FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_c_id = {cust} ORDER BY o_id DESC LIMIT 1"
    ))?;
    if let Some(o) = last.first().and_then(|r| r[0].clone()) {
        c.rows(&format!(
            "SELECT ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"
        ))?;
    }
    Ok(End::Committed)
}

/// Clause 2.7: the oldest undelivered order of each of the warehouse's ten districts
/// delivered, in one database transaction. A district with none is skipped.
fn delivery(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let w = h.w;
    let carrier = g.int(1, 10);
    for d in 1..=gen::DISTRICTS {
        let oldest = c.rows(&format!(
            "SELECT no_o_id FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} ORDER BY no_o_id LIMIT 1 FOR UPDATE"
        ))?;
        let Some(o) = oldest.first().and_then(|r| r[0].clone()) else {
            continue;
        };
        if c.exec(&format!(
            "DELETE FROM new_order WHERE no_w_id = {w} AND no_d_id = {d} AND no_o_id = {o}"
        ))? == 0
        {
            // Another terminal's Delivery took it between the select and the delete.
            continue;
        }
        let cust = first_number(
            &c.rows(&format!(
                "SELECT o_c_id FROM orders WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o}"
            ))?,
            "order",
        )?;
        c.exec(&format!(
            "UPDATE orders SET o_carrier_id = {carrier} WHERE o_w_id = {w} AND o_d_id = {d} AND o_id = {o}"
        ))?;
        c.exec(&format!(
            "UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"
        ))?;
        let total = c
            .rows(&format!(
                "SELECT SUM(ol_amount) FROM order_line WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id = {o}"
            ))?
            .first()
            .and_then(|r| r[0].clone())
            .unwrap_or_else(|| "0".into());
        c.exec(&format!(
            "UPDATE customer SET c_balance = c_balance + {total}, c_delivery_cnt = c_delivery_cnt + 1 WHERE c_w_id = {w} AND c_d_id = {d} AND c_id = {cust}"
        ))?;
    }
    Ok(End::Committed)
}

/// Clause 2.8: how many items of the district's last 20 orders are below a stock threshold
/// of 10 to 20. Reads only; the terminal's own district.
fn stock_level(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let (w, d) = (h.w, h.d);
    let threshold = g.int(10, 20);
    let next = c.number(&format!(
        "SELECT d_next_o_id FROM district WHERE d_w_id = {w} AND d_id = {d}"
    ))? as u64;
    c.rows(&format!(
        "SELECT COUNT(DISTINCT s_i_id) FROM order_line, stock WHERE ol_w_id = {w} AND ol_d_id = {d} AND ol_o_id < {next} AND ol_o_id >= {} AND s_w_id = {w} AND s_i_id = ol_i_id AND s_quantity < {threshold}",
        next.saturating_sub(20)
    ))?;
    Ok(End::Committed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deck_holds_the_standard_mix_in_every_hundred() {
        let mut g = Gen::new(3);
        let mut deck = Deck::new();
        let mut n = [0u32; 5];
        for _ in 0..300 {
            n[deck.draw(&mut g) as usize] += 1;
        }
        assert_eq!(n, [135, 129, 12, 12, 12]);
    }
}
