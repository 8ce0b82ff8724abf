create table orders(id integer primary key, customer_id int, total real, created_at text);
create table customers(id integer primary key, name text, country text);
