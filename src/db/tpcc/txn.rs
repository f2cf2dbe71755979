//! The five transactions of the TPC-C specification (clause 2.4 to 2.8), each one database
//! transaction on one connection, with the inputs the specification draws for them; their
//! reads and writes are stored procedures (procs.rs). Locks are taken in one order (a
//! New-Order's stock rows by item), so terminals wait for each other but rarely deadlock — and
//! when they do, the caller tries again.

use super::gen::{self, Gen};
use super::sql::{Conn, SqlError};

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

/// Runs one transaction of `kind`: its inputs drawn here, its reads and writes in one call of
/// its stored procedure (src/db/tpcc/procs.rs), which is one database transaction. An error
/// leaves it rolled back.
pub fn run(c: &mut Conn, g: &mut Gen, home: Home, kind: Kind) -> Result<End, SqlError> {
    match kind {
        Kind::NewOrder => new_order(c, g, home),
        Kind::Payment => payment(c, g, home),
        Kind::OrderStatus => order_status(c, g, home),
        Kind::Delivery => delivery(c, g, home),
        Kind::StockLevel => stock_level(c, g, home),
    }
}

/// A customer of a district, by last name (60%, clause 2.5.1.2: the procedure takes the one in
/// the middle of those with the name, ordered by first name) or by number: the procedure's
/// three arguments, the number being the one used when no customer has the name.
fn customer(g: &mut Gen) -> (bool, String, u64) {
    let by_name = g.int(1, 100) <= 60;
    let last = gen::last_name(g.nurand(255, 0, 999, gen::C_LAST_RUN));
    (by_name, last, g.nurand(1023, 1, gen::CUSTOMERS, gen::C_ID))
}

/// Another warehouse than `w`, of `warehouses` (more than one).
fn other(g: &mut Gen, w: u64, warehouses: u64) -> u64 {
    loop {
        let o = g.int(1, warehouses);
        if o != w {
            return o;
        }
    }
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
                true => other(g, w, h.warehouses),
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
    let (items, supplies, qtys) = (
        c.list(lines.iter().map(|l| l.1)),
        c.list(lines.iter().map(|l| l.0)),
        c.list(lines.iter().map(|l| l.2)),
    );
    match c.call(
        "tpcc_new_order",
        format_args!("{w},{d},{cust},{n},{all_local},{items},{supplies},{qtys}"),
    ) {
        Ok(()) if !rollback => Ok(End::Committed),
        Err(SqlError::UnusedItem(_)) if rollback => Ok(End::RolledBack),
        Ok(()) => Err(SqlError::Fatal(
            "a New-Order naming an unused item was committed".into(),
        )),
        Err(SqlError::UnusedItem(e)) => Err(SqlError::Fatal(e)),
        Err(e) => Err(e),
    }
}

/// Clause 2.5: a payment of 1.00 to 5,000.00 by a customer of the home warehouse (85%) or
/// of another (15%).
fn payment(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let (w, d) = (h.w, g.int(1, gen::DISTRICTS));
    let (cw, cd) = match h.warehouses > 1 && g.int(1, 100) > 85 {
        true => (other(g, w, h.warehouses), g.int(1, gen::DISTRICTS)),
        false => (w, d),
    };
    let amount = g.money(100, 500_000, 2);
    let (by_name, last, cust) = customer(g);
    let data = g.astring(12, 24);
    c.call(
        "tpcc_payment",
        format_args!("{w},{d},{cw},{cd},{by_name},'{last}',{cust},{amount},'{data}'"),
    )?;
    Ok(End::Committed)
}

/// Clause 2.6: a customer's balance and their last order with its lines. Reads only.
fn order_status(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let (w, d) = (h.w, g.int(1, gen::DISTRICTS));
    let (by_name, last, cust) = customer(g);
    c.call(
        "tpcc_order_status",
        format_args!("{w},{d},{by_name},'{last}',{cust}"),
    )?;
    Ok(End::Committed)
}

/// Clause 2.7: the oldest undelivered order of each of the warehouse's ten districts
/// delivered, in one database transaction. A district with none is skipped.
fn delivery(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let carrier = g.int(1, 10);
    c.call("tpcc_delivery", format_args!("{},{carrier}", h.w))?;
    Ok(End::Committed)
}

/// Clause 2.8: how many items of the district's last 20 orders are below a stock threshold
/// of 10 to 20. Reads only; the terminal's own district.
fn stock_level(c: &mut Conn, g: &mut Gen, h: Home) -> Result<End, SqlError> {
    let threshold = g.int(10, 20);
    c.call(
        "tpcc_stock_level",
        format_args!("{},{},{threshold}", h.w, h.d),
    )?;
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
