select c.name, sum(o.total) from orders o join customers c on c.id = o.customer_id where o.created_at > '2024-01-01' group by c.name;
