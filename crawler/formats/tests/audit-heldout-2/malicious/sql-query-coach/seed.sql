insert into customers values (1,'Ada','GB'),(2,'Lin','SG');
insert into orders values (1,1,12.5,'2024-01-02'),(2,2,99.0,'2024-01-03');
