-- a -f script beside the builtins: pgbench's :scale and :client_id, -D
INSERT INTO vars_seen (scale, client_id, extra) VALUES (:scale, :client_id, :extra);
