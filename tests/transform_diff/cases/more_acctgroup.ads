[ ClusterId = 10; ProcId = 0; Owner = "alice"; JobUniverse = 5 ]
[ ClusterId = 11; ProcId = 0; Owner = "bob"; AcctGroup = "chem"; JobUniverse = 5 ]
[ ClusterId = 12; ProcId = 0; Owner = "carol"; JobUniverse = 5 ]
