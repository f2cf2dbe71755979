//! The five transactions as stored procedures, one per kind and server: a terminal sends each
//! transaction as one call, as HammerDB's TPC-C does, so the driver costs the server a round
//! trip a transaction rather than one a statement (about 25 by the mix). The inputs are drawn
//! by the terminal (src/db/tpcc/txn.rs); the procedures hold the specification's reads and
//! writes in the order clause 2.4 to 2.8 gives them.
//!
//! PostgreSQL's are PL/pgSQL functions called by one `SELECT` in autocommit: the statement is
//! the transaction, and an error rolls all of it back. MariaDB's are procedures that begin and
//! commit their own transaction, with a handler that rolls back and raises the error again, so
//! the terminal sees a deadlock's own code and tries again. A New-Order naming an unused item
//! (1%, clause 2.4.2.3) raises SQLSTATE `IG001`, which the terminal counts as the rollback the
//! specification asks for.
//!
//! Every local and parameter has a `p_`/`v_` prefix: in MariaDB a local shadows a column of the
//! same name.

use super::sql::{Conn, UNUSED_ITEM};
use anyhow::{Context, Result};

/// The column of a district's stock information, `p_d` being 1 to 10 (clause 2.4.2.2).
const S_DIST: &str = "CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 \
     WHEN 4 THEN s_dist_04 WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 \
     WHEN 8 THEN s_dist_08 WHEN 9 THEN s_dist_09 ELSE s_dist_10 END";

/// Payment's reads and writes after its customer is found (clause 2.5.2.2), in SQL both
/// servers' procedure languages take alike.
const PAYMENT: &str = "UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
               SELECT w_name, w_street_1, w_street_2, w_city, w_state, w_zip
                 INTO v_name, v_s1, v_s2, v_city, v_state, v_zip FROM warehouse WHERE w_id = p_w;
               UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
               SELECT d_name, d_street_1, d_street_2, d_city, d_state, d_zip
                 INTO v_name, v_s1, v_s2, v_city, v_state, v_zip FROM district WHERE d_w_id = p_w AND d_id = p_d;
               SELECT c_first, c_last, c_credit, c_balance INTO v_first, v_last, v_credit, v_balance
                 FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cust FOR UPDATE;
               IF v_credit = 'BC' THEN
                 UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                   c_payment_cnt = c_payment_cnt + 1,
                   c_data = SUBSTR(CONCAT(v_cust, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount, ' ', c_data), 1, 500)
                   WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cust;
               ELSE
                 UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
                   c_payment_cnt = c_payment_cnt + 1
                   WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cust;
               END IF;
               INSERT INTO history VALUES (v_cust, p_cd, p_cw, p_d, p_w, CURRENT_TIMESTAMP, p_amount, p_data);";

/// PostgreSQL's functions.
fn postgres() -> [String; 5] {
    // Clause 2.5.2.2 and 2.6.2.2: by last name, the middle one of those ordered by first name.
    let by_name = |w: &str, d: &str| {
        format!(
            "IF p_by_name THEN
               SELECT count(*) INTO v_n FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_last;
               IF v_n > 0 THEN
                 SELECT c_id INTO v_cust FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_last
                   ORDER BY c_first OFFSET (v_n - 1) / 2 LIMIT 1;
               END IF;
             END IF;"
        )
    };
    [
        format!(
            "CREATE OR REPLACE FUNCTION tpcc_new_order(p_w INT, p_d INT, p_cust INT, p_n INT,
               p_all_local INT, p_items INT[], p_supplies INT[], p_qtys INT[]) RETURNS INT
             LANGUAGE plpgsql AS $$
             DECLARE
               v_next INT; v_disc NUMERIC; v_last TEXT; v_credit TEXT; v_wtax NUMERIC; v_dtax NUMERIC;
               v_price NUMERIC; v_name TEXT; v_data TEXT; v_q INT; v_info TEXT;
             BEGIN
               SELECT c_discount, c_last, c_credit, w_tax INTO v_disc, v_last, v_credit, v_wtax
                 FROM customer, warehouse WHERE w_id = p_w AND c_w_id = p_w AND c_d_id = p_d AND c_id = p_cust;
               SELECT d_next_o_id, d_tax INTO v_next, v_dtax FROM district
                 WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
               UPDATE district SET d_next_o_id = v_next + 1 WHERE d_w_id = p_w AND d_id = p_d;
               INSERT INTO orders VALUES (v_next, p_d, p_w, p_cust, CURRENT_TIMESTAMP, NULL, p_n, p_all_local);
               INSERT INTO new_order VALUES (v_next, p_d, p_w);
               FOR k IN 1..p_n LOOP
                 SELECT i_price, i_name, i_data INTO v_price, v_name, v_data FROM item WHERE i_id = p_items[k];
                 IF NOT FOUND THEN
                   RAISE EXCEPTION 'item % is unused', p_items[k] USING ERRCODE = '{UNUSED_ITEM}';
                 END IF;
                 SELECT s_quantity, {S_DIST} INTO v_q, v_info FROM stock
                   WHERE s_i_id = p_items[k] AND s_w_id = p_supplies[k] FOR UPDATE;
                 IF NOT FOUND THEN
                   RAISE EXCEPTION 'stock of item % in warehouse %: no row', p_items[k], p_supplies[k];
                 END IF;
                 UPDATE stock SET
                   s_quantity = CASE WHEN v_q >= p_qtys[k] + 10 THEN v_q - p_qtys[k] ELSE v_q + 91 - p_qtys[k] END,
                   s_ytd = s_ytd + p_qtys[k], s_order_cnt = s_order_cnt + 1,
                   s_remote_cnt = s_remote_cnt + CASE WHEN p_supplies[k] <> p_w THEN 1 ELSE 0 END
                   WHERE s_i_id = p_items[k] AND s_w_id = p_supplies[k];
                 INSERT INTO order_line VALUES (v_next, p_d, p_w, k, p_items[k], p_supplies[k], NULL,
                   p_qtys[k], v_price * p_qtys[k], v_info);
               END LOOP;
               RETURN v_next;
             END $$"
        ),
        format!(
            "CREATE OR REPLACE FUNCTION tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT,
               p_by_name BOOLEAN, p_last TEXT, p_cust INT, p_amount NUMERIC, p_data TEXT) RETURNS INT
             LANGUAGE plpgsql AS $$
             DECLARE
               v_cust INT := p_cust; v_n INT; v_credit TEXT; v_first TEXT; v_last TEXT; v_balance NUMERIC;
               v_name TEXT; v_s1 TEXT; v_s2 TEXT; v_city TEXT; v_state TEXT; v_zip TEXT;
             BEGIN
               {}
               {PAYMENT}
               RETURN v_cust;
             END $$",
            by_name("p_cw", "p_cd")
        ),
        format!(
            "CREATE OR REPLACE FUNCTION tpcc_order_status(p_w INT, p_d INT, p_by_name BOOLEAN,
               p_last TEXT, p_cust INT) RETURNS INT
             LANGUAGE plpgsql AS $$
             DECLARE
               v_cust INT := p_cust; v_n INT := 0; v_balance NUMERIC; v_first TEXT; v_middle TEXT; v_last TEXT;
               v_o INT; v_entry TIMESTAMP; v_carrier INT; v_lines INT := 0; v_qty BIGINT; v_amount NUMERIC;
               v_items BIGINT; v_supplies BIGINT; v_delivered TIMESTAMP;
             BEGIN
               {}
               SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
                 FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_cust;
               SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier FROM orders
                 WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_cust ORDER BY o_id DESC LIMIT 1;
               IF FOUND THEN
                 -- Every line's columns read, as a terminal would show them.
                 SELECT count(*), sum(ol_i_id), sum(ol_supply_w_id), sum(ol_quantity), sum(ol_amount), max(ol_delivery_d)
                   INTO v_lines, v_items, v_supplies, v_qty, v_amount, v_delivered
                   FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
               END IF;
               RETURN v_lines;
             END $$",
            by_name("p_w", "p_d")
        ),
        "CREATE OR REPLACE FUNCTION tpcc_delivery(p_w INT, p_carrier INT) RETURNS INT
         LANGUAGE plpgsql AS $$
         DECLARE v_o INT; v_cust INT; v_total NUMERIC; v_gone INT; v_done INT := 0;
         BEGIN
           FOR v_d IN 1..10 LOOP
             SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
               ORDER BY no_o_id LIMIT 1 FOR UPDATE;
             CONTINUE WHEN NOT FOUND;
             DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
             GET DIAGNOSTICS v_gone = ROW_COUNT;
             -- Another terminal's Delivery took it between the select and the delete.
             CONTINUE WHEN v_gone = 0;
             SELECT o_c_id INTO v_cust FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
             UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
             UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
               WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
             SELECT COALESCE(SUM(ol_amount), 0) INTO v_total FROM order_line
               WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
             UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
               WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_cust;
             v_done := v_done + 1;
           END LOOP;
           RETURN v_done;
         END $$"
            .into(),
        "CREATE OR REPLACE FUNCTION tpcc_stock_level(p_w INT, p_d INT, p_threshold INT) RETURNS INT
         LANGUAGE plpgsql AS $$
         DECLARE v_next INT; v_low INT;
         BEGIN
           SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
           SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
             WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
               AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
           RETURN v_low;
         END $$"
            .into(),
    ]
}

/// MariaDB's procedures. Each begins its own transaction: in autocommit every statement of a
/// procedure would commit alone.
fn mariadb() -> [String; 5] {
    let by_name = |w: &str, d: &str| {
        format!(
            "IF p_by_name THEN
               SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_last;
               IF v_n > 0 THEN
                 SET v_off = (v_n - 1) DIV 2;
                 SELECT c_id INTO v_cust FROM customer WHERE c_w_id = {w} AND c_d_id = {d} AND c_last = p_last
                   ORDER BY c_first LIMIT v_off, 1;
               END IF;
             END IF;"
        )
    };
    // A failure rolls back and reaches the terminal with its own code (a deadlock's 1213).
    let handler = "DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;";
    [
        format!(
            "CREATE OR REPLACE PROCEDURE tpcc_new_order(p_w INT, p_d INT, p_cust INT, p_n INT,
               p_all_local INT, p_items VARCHAR(255), p_supplies VARCHAR(255), p_qtys VARCHAR(255))
             BEGIN
               DECLARE v_k INT DEFAULT 1;
               DECLARE v_next, v_item, v_supply, v_qty, v_q INT;
               DECLARE v_disc, v_wtax, v_dtax DECIMAL(4,4);
               DECLARE v_price DECIMAL(5,2);
               DECLARE v_last, v_name, v_data, v_info VARCHAR(50);
               DECLARE v_credit CHAR(2);
               {handler}
               START TRANSACTION;
               SELECT c_discount, c_last, c_credit, w_tax INTO v_disc, v_last, v_credit, v_wtax
                 FROM customer, warehouse WHERE w_id = p_w AND c_w_id = p_w AND c_d_id = p_d AND c_id = p_cust;
               SELECT d_next_o_id, d_tax INTO v_next, v_dtax FROM district
                 WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
               UPDATE district SET d_next_o_id = v_next + 1 WHERE d_w_id = p_w AND d_id = p_d;
               INSERT INTO orders VALUES (v_next, p_d, p_w, p_cust, CURRENT_TIMESTAMP, NULL, p_n, p_all_local);
               INSERT INTO new_order VALUES (v_next, p_d, p_w);
               WHILE v_k <= p_n DO
                 SET v_item = SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', v_k), ',', -1);
                 SET v_supply = SUBSTRING_INDEX(SUBSTRING_INDEX(p_supplies, ',', v_k), ',', -1);
                 SET v_qty = SUBSTRING_INDEX(SUBSTRING_INDEX(p_qtys, ',', v_k), ',', -1);
                 SET v_price = NULL;
                 SELECT i_price, i_name, i_data INTO v_price, v_name, v_data FROM item WHERE i_id = v_item;
                 IF v_price IS NULL THEN
                   SIGNAL SQLSTATE '{UNUSED_ITEM}' SET MESSAGE_TEXT = 'an unused item';
                 END IF;
                 SET v_q = NULL;
                 SELECT s_quantity, {S_DIST} INTO v_q, v_info FROM stock
                   WHERE s_i_id = v_item AND s_w_id = v_supply FOR UPDATE;
                 IF v_q IS NULL THEN
                   SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'a stock row is missing';
                 END IF;
                 UPDATE stock SET
                   s_quantity = CASE WHEN v_q >= v_qty + 10 THEN v_q - v_qty ELSE v_q + 91 - v_qty END,
                   s_ytd = s_ytd + v_qty, s_order_cnt = s_order_cnt + 1,
                   s_remote_cnt = s_remote_cnt + CASE WHEN v_supply <> p_w THEN 1 ELSE 0 END
                   WHERE s_i_id = v_item AND s_w_id = v_supply;
                 INSERT INTO order_line VALUES (v_next, p_d, p_w, v_k, v_item, v_supply, NULL,
                   v_qty, v_price * v_qty, v_info);
                 SET v_k = v_k + 1;
               END WHILE;
               COMMIT;
             END"
        ),
        format!(
            "CREATE OR REPLACE PROCEDURE tpcc_payment(p_w INT, p_d INT, p_cw INT, p_cd INT,
               p_by_name BOOLEAN, p_last VARCHAR(16), p_cust INT, p_amount DECIMAL(6,2), p_data VARCHAR(24))
             BEGIN
               DECLARE v_cust INT DEFAULT p_cust;
               DECLARE v_n, v_off INT;
               DECLARE v_credit CHAR(2);
               DECLARE v_first, v_last, v_name, v_s1, v_s2, v_city VARCHAR(20);
               DECLARE v_state CHAR(2);
               DECLARE v_zip CHAR(9);
               DECLARE v_balance DECIMAL(12,2);
               {handler}
               START TRANSACTION;
               {}
               {PAYMENT}
               COMMIT;
             END",
            by_name("p_cw", "p_cd")
        ),
        format!(
            "CREATE OR REPLACE PROCEDURE tpcc_order_status(p_w INT, p_d INT, p_by_name BOOLEAN,
               p_last VARCHAR(16), p_cust INT)
             BEGIN
               DECLARE v_cust INT DEFAULT p_cust;
               DECLARE v_n, v_off, v_o, v_carrier, v_lines INT;
               DECLARE v_balance, v_amount DECIMAL(12,2);
               DECLARE v_first, v_last VARCHAR(16);
               DECLARE v_middle CHAR(2);
               DECLARE v_entry, v_delivered DATETIME;
               DECLARE v_items, v_supplies, v_qty BIGINT;
               {handler}
               START TRANSACTION;
               {}
               SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
                 FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_cust;
               SET v_o = NULL;
               SELECT o_id, o_entry_d, o_carrier_id INTO v_o, v_entry, v_carrier FROM orders
                 WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_cust ORDER BY o_id DESC LIMIT 1;
               IF v_o IS NOT NULL THEN
                 -- Every line's columns read, as a terminal would show them.
                 SELECT COUNT(*), SUM(ol_i_id), SUM(ol_supply_w_id), SUM(ol_quantity), SUM(ol_amount), MAX(ol_delivery_d)
                   INTO v_lines, v_items, v_supplies, v_qty, v_amount, v_delivered
                   FROM order_line WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_o;
               END IF;
               COMMIT;
             END",
            by_name("p_w", "p_d")
        ),
        format!(
            "CREATE OR REPLACE PROCEDURE tpcc_delivery(p_w INT, p_carrier INT)
             BEGIN
               DECLARE v_d INT DEFAULT 1;
               DECLARE v_o, v_cust INT;
               DECLARE v_total DECIMAL(12,2);
               {handler}
               START TRANSACTION;
               WHILE v_d <= 10 DO
                 SET v_o = NULL;
                 SELECT no_o_id INTO v_o FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d
                   ORDER BY no_o_id LIMIT 1 FOR UPDATE;
                 IF v_o IS NOT NULL THEN
                   DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = v_d AND no_o_id = v_o;
                   -- Another terminal's Delivery may have taken it between the select and the delete.
                   IF ROW_COUNT() > 0 THEN
                     SELECT o_c_id INTO v_cust FROM orders WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
                     UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = v_d AND o_id = v_o;
                     UPDATE order_line SET ol_delivery_d = CURRENT_TIMESTAMP
                       WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
                     SELECT COALESCE(SUM(ol_amount), 0) INTO v_total FROM order_line
                       WHERE ol_w_id = p_w AND ol_d_id = v_d AND ol_o_id = v_o;
                     UPDATE customer SET c_balance = c_balance + v_total, c_delivery_cnt = c_delivery_cnt + 1
                       WHERE c_w_id = p_w AND c_d_id = v_d AND c_id = v_cust;
                   END IF;
                 END IF;
                 SET v_d = v_d + 1;
               END WHILE;
               COMMIT;
             END"
        ),
        format!(
            "CREATE OR REPLACE PROCEDURE tpcc_stock_level(p_w INT, p_d INT, p_threshold INT)
             BEGIN
               DECLARE v_next, v_low INT;
               {handler}
               START TRANSACTION;
               SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
               SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
                 WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
                   AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
               COMMIT;
             END"
        ),
    ]
}

/// The five procedures made (or made again) in the connection's database.
pub fn create(c: &mut Conn) -> Result<()> {
    let bodies = match c {
        Conn::Pg(_) => postgres(),
        Conn::My(_) => mariadb(),
    };
    for sql in bodies {
        let name = sql
            .split_whitespace()
            .nth(4)
            .and_then(|n| n.split('(').next())
            .unwrap_or("?")
            .to_string();
        c.run(&sql)
            .with_context(|| format!("making the stored procedure {name}"))?;
    }
    Ok(())
}
