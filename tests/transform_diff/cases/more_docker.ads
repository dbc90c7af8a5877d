[ ClusterId = 10; ProcId = 0; Owner = "alice"; JobUniverse = 5; WantSL6 = true; Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX"); RequestMemory = 2048 ]
[ ClusterId = 10; ProcId = 1; Owner = "alice"; JobUniverse = 5; WantSL6 = true; DockerImage = "centos7"; Requirements = true ]
[ ClusterId = 11; ProcId = 0; Owner = "bob"; JobUniverse = 9; WantSL6 = true; Requirements = true ]
[ ClusterId = 12; ProcId = 0; Owner = "carol"; JobUniverse = 5; Requirements = TARGET.Memory > 100 ]
