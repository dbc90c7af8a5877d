//! The queue database schema, versioned by `PRAGMA user_version` over an
//! append-only list of migrations, each applied in its own transaction.

use rusqlite::Connection;

/// Migration `i` takes the database from version `i` to `i + 1`. Never edit
/// or reorder a step that has shipped; append a new one.
pub const MIGRATIONS: &[&str] = &[
    // 1: the queue, its transaction log, followers and history.
    r#"
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value INTEGER NOT NULL
    ) WITHOUT ROWID;
    INSERT INTO meta (key, value) VALUES ('next_cluster', 1);

    -- One row per cluster: the cluster ad in new ClassAd syntax.
    CREATE TABLE clusters (
        cluster INTEGER PRIMARY KEY,
        owner   TEXT NOT NULL,
        ad      TEXT NOT NULL
    );

    -- One row per job: the attributes that differ from the cluster ad, and
    -- the hot attributes as columns, which are authoritative.
    CREATE TABLE procs (
        cluster INTEGER NOT NULL,
        proc    INTEGER NOT NULL,
        status  INTEGER NOT NULL,
        owner   TEXT NOT NULL,
        prio    INTEGER NOT NULL,
        qdate   INTEGER NOT NULL,
        entered INTEGER NOT NULL,
        ad      TEXT NOT NULL,
        PRIMARY KEY (cluster, proc)
    ) WITHOUT ROWID;
    CREATE INDEX procs_status ON procs (status);
    CREATE INDEX procs_owner ON procs (owner);

    -- The transaction log in the spirit of HTCondor's job_queue.log:
    -- op 101 new ad, 102 destroy ad, 103 set attribute, 104 delete attribute,
    -- 105 begin and 106 end of a transaction. seq only grows.
    CREATE TABLE txlog (
        seq   INTEGER PRIMARY KEY AUTOINCREMENT,
        op    INTEGER NOT NULL,
        key   TEXT NOT NULL DEFAULT '',
        name  TEXT NOT NULL DEFAULT '',
        value TEXT NOT NULL DEFAULT ''
    );

    -- Tools that follow the log register here; the log is never trimmed
    -- below the lowest position.
    CREATE TABLE followers (
        name     TEXT PRIMARY KEY,
        position INTEGER NOT NULL
    ) WITHOUT ROWID;

    -- Jobs that left the queue: the final differences from their cluster
    -- ad, which is kept in history_clusters.
    CREATE TABLE history_clusters (
        cluster INTEGER PRIMARY KEY,
        ad      TEXT NOT NULL
    );
    CREATE TABLE history (
        cluster   INTEGER NOT NULL,
        proc      INTEGER NOT NULL,
        owner     TEXT NOT NULL,
        status    INTEGER NOT NULL,
        completed INTEGER NOT NULL,
        ad        TEXT NOT NULL,
        PRIMARY KEY (cluster, proc)
    ) WITHOUT ROWID;
    CREATE INDEX history_completed ON history (completed);
    "#,
    // 2: this machine's slots, and stop requests for running jobs.
    r#"
    -- One row per slot. A partitionable slot's cpus/memory/disk are what it
    -- has left; each dynamic slot carved from it names it as parent. The
    -- machine's detected attributes are not stored: readers add them.
    CREATE TABLE slots (
        name      TEXT PRIMARY KEY,            -- slot1, slot1_4, slot2
        kind      TEXT NOT NULL,               -- static | partitionable | dynamic
        slot_id   INTEGER NOT NULL,            -- SlotID
        sub_id    INTEGER NOT NULL DEFAULT 0,  -- the N of slot1_N
        slot_type INTEGER NOT NULL DEFAULT 0,  -- n of SLOT_TYPE_n (0: default)
        parent    TEXT,
        cpus      INTEGER NOT NULL,
        memory    INTEGER NOT NULL,            -- MiB
        disk      INTEGER NOT NULL,            -- KiB
        state     TEXT NOT NULL DEFAULT 'Unclaimed',
        activity  TEXT NOT NULL DEFAULT 'Idle',
        entered_state    INTEGER NOT NULL,
        entered_activity INTEGER NOT NULL,
        remote_user  TEXT,                     -- the submitter (user@uid_domain)
        remote_owner TEXT,                     -- the job's Owner
        cluster   INTEGER,                     -- the job on the slot
        proc      INTEGER,
        claim     TEXT,                        -- claim id, new for every claim
        job_start INTEGER,                     -- when the job on the slot started (JobStart)
        total_cpus   INTEGER NOT NULL DEFAULT 0, -- a partitionable slot's whole size
        total_memory INTEGER NOT NULL DEFAULT 0,
        total_disk   INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE INDEX slots_job ON slots (cluster, proc);
    -- Claim reuse asks, per job, for the owner's best idle job and whether
    -- anyone else has idle jobs: both are index range reads.
    CREATE INDEX procs_status_owner ON procs (status, owner, prio DESC, cluster, proc);

    -- A request to a running job's shadow: remove, hold, vacate,
    -- vacate-fast, suspend or continue. The tool writes it in the same
    -- transaction as the job's change and then wakes the shadow; the shadow
    -- (or, when the shadow is gone, the next pass) carries it out and
    -- deletes it, so a request is never lost.
    CREATE TABLE requests (
        cluster INTEGER NOT NULL,
        proc    INTEGER NOT NULL,
        kind    TEXT NOT NULL,
        made    INTEGER NOT NULL,
        PRIMARY KEY (cluster, proc, kind)
    ) WITHOUT ROWID;
    "#,
    // 3: the accountant (user priorities); see negotiator::accountant.
    r#"
    -- One row per submitter (HTCondor's Customer records). factor 0 means
    -- not yet assigned: the next update assigns it from the configuration.
    CREATE TABLE accountant (
        name     TEXT PRIMARY KEY,
        priority REAL NOT NULL DEFAULT 0.5,       -- the real priority
        factor   REAL NOT NULL DEFAULT 0,
        resources_used          REAL NOT NULL DEFAULT 0,  -- slots held
        weighted_resources_used REAL NOT NULL DEFAULT 0,  -- their SLOT_WEIGHT
        uncharged_time          REAL NOT NULL DEFAULT 0,  -- claims ended since the last update
        weighted_uncharged_time REAL NOT NULL DEFAULT 0,
        accumulated_usage          REAL NOT NULL DEFAULT 0, -- slot-seconds
        weighted_accumulated_usage REAL NOT NULL DEFAULT 0,
        begin_usage_time INTEGER NOT NULL DEFAULT 0,
        last_usage_time  INTEGER NOT NULL DEFAULT 0,
        floor   REAL NOT NULL DEFAULT 0,
        ceiling REAL NOT NULL DEFAULT -1          -- -1: unlimited
    ) WITHOUT ROWID;

    -- The claims the last update saw (HTCondor's Resource records): the
    -- weight to charge when one ends before the next update.
    CREATE TABLE accountant_resources (
        slot   TEXT PRIMARY KEY,
        claim  TEXT,
        name   TEXT NOT NULL,
        weight REAL NOT NULL
    ) WITHOUT ROWID;
    "#,
    // 4: job counts by owner and status, and the number of jobs in
    // history, kept by triggers, so that the totals lines of a listing of
    // one job and the history limit of a write count nothing.
    r#"
    INSERT OR REPLACE INTO meta (key, value) SELECT 'history_jobs', count(*) FROM history;
    -- An INSERT OR REPLACE over a row already in history counts it twice
    -- (REPLACE fires no delete trigger): the count is an upper bound that
    -- Queue::trim sets back to the exact number.
    CREATE TRIGGER history_jobs_insert AFTER INSERT ON history BEGIN
        UPDATE meta SET value = value + 1 WHERE key = 'history_jobs';
    END;
    CREATE TRIGGER history_jobs_delete AFTER DELETE ON history BEGIN
        UPDATE meta SET value = value - 1 WHERE key = 'history_jobs';
    END;

    CREATE TABLE job_counts (
        owner  TEXT NOT NULL,
        status INTEGER NOT NULL,
        n      INTEGER NOT NULL,
        PRIMARY KEY (owner, status)
    ) WITHOUT ROWID;
    INSERT INTO job_counts (owner, status, n)
        SELECT owner, status, count(*) FROM procs GROUP BY owner, status;
    CREATE TRIGGER job_counts_insert AFTER INSERT ON procs BEGIN
        INSERT INTO job_counts (owner, status, n) VALUES (NEW.owner, NEW.status, 1)
            ON CONFLICT (owner, status) DO UPDATE SET n = n + 1;
    END;
    CREATE TRIGGER job_counts_delete AFTER DELETE ON procs BEGIN
        UPDATE job_counts SET n = n - 1 WHERE owner = OLD.owner AND status = OLD.status;
    END;
    CREATE TRIGGER job_counts_update AFTER UPDATE OF owner, status ON procs
    WHEN OLD.owner IS NOT NEW.owner OR OLD.status IS NOT NEW.status BEGIN
        UPDATE job_counts SET n = n - 1 WHERE owner = OLD.owner AND status = OLD.status;
        INSERT INTO job_counts (owner, status, n) VALUES (NEW.owner, NEW.status, 1)
            ON CONFLICT (owner, status) DO UPDATE SET n = n + 1;
    END;
    "#,
    // 5: the job router's state (see router::state): one row per job it
    // manages, and each route's throttle counters, so that a router killed
    // at any instant resumes without losing or re-routing a job.
    r#"
    CREATE TABLE router_jobs (
        src_cluster  INTEGER NOT NULL,
        src_proc     INTEGER NOT NULL,
        state        TEXT NOT NULL,     -- submitted | cleanup | finalized (retired: deleted)
        route        TEXT NOT NULL,
        dest_cluster INTEGER,           -- the routed copy, once submitted
        dest_proc    INTEGER,
        outcome      TEXT NOT NULL DEFAULT '', -- success | failure | interrupted | rerouted
        since        INTEGER NOT NULL,
        PRIMARY KEY (src_cluster, src_proc)
    ) WITHOUT ROWID;
    CREATE TABLE router_routes (
        name             TEXT PRIMARY KEY,
        throttle         REAL NOT NULL DEFAULT 0,
        window_start     INTEGER NOT NULL,
        recent_routed    INTEGER NOT NULL DEFAULT 0,
        recent_failed    INTEGER NOT NULL DEFAULT 0,
        recent_succeeded INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    "#,
    // 6: the daemon ClassAd hooks (see hooks::cron::store): each cron job's
    // last run and running instance, and the ads its newest output
    // published, with their time.
    r#"
    CREATE TABLE cron_jobs (
        family     TEXT NOT NULL,           -- STARTD_CRON | SCHEDD_CRON
        name       TEXT NOT NULL,
        signature  TEXT NOT NULL DEFAULT '', -- the job's knobs when it last started
        last_start INTEGER,
        last_end   INTEGER,
        pid        INTEGER,                 -- the running instance's process group
        generation INTEGER NOT NULL DEFAULT 0, -- the reconfigurations counted at its last start
        status     TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (family, name)
    ) WITHOUT ROWID;
    CREATE TABLE cron_ads (
        family  TEXT NOT NULL,
        job     TEXT NOT NULL,
        tag     TEXT NOT NULL,              -- '' for the job's own ad
        ad      TEXT NOT NULL,              -- old ClassAd syntax
        prefix  TEXT NOT NULL,
        slots   TEXT NOT NULL,              -- the job's _SLOTS
        updated INTEGER NOT NULL,
        PRIMARY KEY (family, job, tag)
    ) WITHOUT ROWID;
    "#,
    // 7: the fetch-work hooks (negotiator::fetch): per fetching slot, its last
    // fetch and last failure; per fetched job, the slot it is bound to and
    // the claim id REPLY_FETCH was told.
    r#"
    CREATE TABLE fetch_slots (
        slot       TEXT PRIMARY KEY,
        keyword    TEXT NOT NULL,
        spawned    INTEGER,             -- LastFetchWorkSpawned
        completed  INTEGER,             -- LastFetchWorkCompleted
        result     TEXT NOT NULL DEFAULT '', -- work | none | rejected | failed
        error      TEXT,                -- the last failure's reason
        error_time INTEGER,
        fetched    INTEGER NOT NULL DEFAULT 0
    ) WITHOUT ROWID;
    CREATE TABLE fetch_jobs (
        cluster INTEGER NOT NULL,
        proc    INTEGER NOT NULL,
        slot    TEXT NOT NULL,
        keyword TEXT NOT NULL,
        claim   TEXT NOT NULL,
        PRIMARY KEY (cluster, proc)
    ) WITHOUT ROWID;
    CREATE INDEX fetch_jobs_slot ON fetch_jobs (slot);
    "#,
    // 8: the transaction log without AUTOINCREMENT, which made every
    // record's INSERT read and rewrite its row of sqlite_sequence (about
    // 4,000 instructions a record; a one-job submit writes 67 records, a
    // short job's run about 29). seq still only grows: Queue::trim always
    // keeps the newest record, so SQLite's next rowid (the largest plus
    // one) never goes back; a log trimmed empty before this step gets one
    // END record at the sequence's end to hold that place.
    r#"
    CREATE TABLE txlog_next (
        seq   INTEGER PRIMARY KEY,
        op    INTEGER NOT NULL,
        key   TEXT NOT NULL DEFAULT '',
        name  TEXT NOT NULL DEFAULT '',
        value TEXT NOT NULL DEFAULT ''
    );
    INSERT INTO txlog_next (seq, op, key, name, value)
        SELECT seq, op, key, name, value FROM txlog;
    INSERT INTO txlog_next (seq, op)
        SELECT seq, 106 FROM sqlite_sequence
        WHERE name = 'txlog' AND seq > (SELECT coalesce(max(seq), 0) FROM txlog);
    DROP TABLE txlog;
    ALTER TABLE txlog_next RENAME TO txlog;
    "#,
    // 9: the job counts and the history count kept by the writes
    // themselves (queue::writer), not by triggers: every process parsed
    // the five triggers with the schema, and every statement that changed
    // procs or history compiled them in (together a tenth of a one-job
    // submit's instructions). The counts are made exact here once. From
    // this version on, the log also holds SET_ATTRS records (queue::op),
    // which an older build would not read.
    r#"
    DROP TRIGGER history_jobs_insert;
    DROP TRIGGER history_jobs_delete;
    DROP TRIGGER job_counts_insert;
    DROP TRIGGER job_counts_delete;
    DROP TRIGGER job_counts_update;
    DELETE FROM job_counts;
    INSERT INTO job_counts (owner, status, n)
        SELECT owner, status, count(*) FROM procs GROUP BY owner, status;
    UPDATE meta SET value = (SELECT count(*) FROM history) WHERE key = 'history_jobs';
    "#,
    // 10: no index of the slots by job. No statement looks a slot up by
    // its job (slots are read by name or all together, a few rows), but
    // every job's start and end moved its slot's entry in the index: one
    // page more in the log per transaction, and one more object for every
    // process to parse with the schema.
    r#"
    DROP INDEX IF EXISTS slots_job;
    "#,
];

/// The schema version this build writes.
pub const VERSION: i64 = MIGRATIONS.len() as i64;

/// The database's schema version, or [`super::QueueError::NewerSchema`]
/// when it is newer than this build understands: asked when the queue is
/// opened, and again by a handle that stays open while other tools run (a
/// newer tern may have migrated the database since, and this process's
/// reads would no longer be right: schema 8, for one, took the log's end
/// out of `sqlite_sequence`).
pub fn known_version(conn: &Connection) -> Result<i64, super::QueueError> {
    let found: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found > VERSION {
        return Err(super::QueueError::NewerSchema {
            found,
            supported: VERSION,
        });
    }
    Ok(found)
}

/// Brings the database up to [`VERSION`]. A newer database is refused.
pub fn migrate(conn: &mut Connection) -> Result<(), super::QueueError> {
    let found = known_version(conn)?;
    for (i, step) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Another process may have migrated meanwhile.
        let now: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if now > i as i64 {
            continue;
        }
        tx.execute_batch(step)?;
        tx.execute_batch(&format!("PRAGMA user_version = {}", i + 1))?;
        tx.commit()?;
    }
    Ok(())
}
