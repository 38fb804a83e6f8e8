package dbgen

import "math"

// Per-table generation (Clause 4.2.3, dbgen's build.c). Each column draws from its own
// stream; a row's draws never depend on another row, so a chunk starts by skipping every
// stream ahead to its first row.

// Stream seeds and draws per row, by column (dbgen's Seed[] table).
const (
	seedPartName, seedPartMfgr, seedPartBrand, seedPartType = 709314158, 1, 46831694, 1841581359
	seedPartSize, seedPartContainer, seedPartComment        = 1193163244, 727633698, 804159733

	seedPSQty, seedPSCost, seedPSComment = 1671059989, 1051288424, 1961692154

	seedSuppAddress, seedSuppNation, seedSuppPhone, seedSuppBalance = 706178559, 110356601, 884434366, 962338209
	seedSuppComment, seedBBBComment, seedBBBJunk, seedBBBOffset     = 1341315363, 202794285, 263032577, 715851524
	seedBBBType                                                     = 753643799

	seedCustAddress, seedCustNation, seedCustPhone, seedCustBalance = 881155353, 1489529863, 1521138112, 298370230
	seedCustSegment, seedCustComment                                = 1140279430, 1335826707

	seedOrderDate, seedOrderLines, seedOrderCust, seedOrderPrio = 1066728069, 1434868289, 851767375, 591449447
	seedOrderClerk, seedOrderComment                            = 1171034773, 276090261

	seedLineQty, seedLineDiscount, seedLineTax, seedLinePart = 209208115, 554590007, 721958466, 1808217256
	seedLineSupp, seedLineShip, seedLineCommit, seedLineRcpt = 2095021727, 1769349045, 904914315, 373135028
	seedLineFlag, seedLineInstruct, seedLineMode             = 717419739, 1371272478, 675466456
	seedLineComment                                          = 1095462486

	seedNationComment, seedRegionComment = 606179079, 1500869201
)

// Base row counts per unit of scale (Clause 4.2.5.1).
const (
	partBase     = 200_000
	supplierBase = 10_000
	customerBase = 150_000
	ordersBase   = 1_500_000
	suppsPerPart = 4
	maxLines     = 7
	orderDateMax = minDate + totalDates - (121 + 30) - 1 // the last order's lines ship and arrive by 1998-12-31
	bbbLength    = len("Customer ") + len("Complaints")
)

// BaseRows is the number of base rows of t: its row count, except PartSupp (Part's count;
// 4 lines each) and LineItem (Orders' count; 1-7 lines each).
func (g *Generator) BaseRows(t Table) int64 {
	d := distsByUse.Get()
	switch t {
	case Nation:
		return int64(len(d.nations.values))
	case Region:
		return int64(len(d.regions.values))
	case Part, PartSupp:
		return scaled(partBase, g.sf)
	case Supplier:
		return scaled(supplierBase, g.sf)
	case Customer:
		return scaled(customerBase, g.sf)
	case Orders, LineItem:
		return scaled(ordersBase, g.sf)
	}
	return 0
}

// scaled is dbgen's row count: the base times the scale factor, truncated.
func scaled(base int64, sf float64) int64 { return int64(float64(base) * sf) }

// textLimits are a comment's shortest and longest length for an average length (V_STR_LOW
// 0.4 and V_STR_HGH 1.6 of the average, Clause 4.2.2.10).
func textLimits(avg float64) (int32, int32) { return int32(avg * 0.4), int32(avg * 1.6) }

// comment is a text column: a pool substring at a random offset of random length.
type comment struct {
	s        stream
	min, max int32
}

func newComment(seed int64, avg float64, rowsPerRow int32) comment {
	lo, hi := textLimits(avg)
	return comment{s: newStream(seed, 2*rowsPerRow), min: lo, max: hi}
}

// next draws the comment's offset and length and locates it in the pool.
func (c *comment) next(p *textPool) textRef {
	off := c.s.intn(0, poolSize-c.max)
	return p.locate(int(off), int(c.s.intn(c.min, c.max)))
}

func (c *comment) write(lw *lineWriter, p *textPool) { writeText(lw, p, c.next(p)) }

func writeText(lw *lineWriter, p *textPool, r textRef) {
	lw.buf = append(p.appendText(lw.buf, r), '|')
}

// alnum is dbgen's random string of letters, digits, ',' and ' ' (Clause 4.2.2.7).
const alnumChars = "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,"

func writeAlnum(lw *lineWriter, s *stream, avg float64) {
	lo, hi := textLimits(avg)
	n := s.intn(lo, hi)
	var bits int64
	for i := int32(0); i < n; i++ {
		if i%5 == 0 {
			bits = int64(s.intn(0, math.MaxInt32))
		}
		lw.buf = append(lw.buf, alnumChars[bits&63])
		bits >>= 6
	}
	lw.buf = append(lw.buf, '|')
}

// writePhone is a phone number (Clause 4.2.2.9): country code 10 + nation key, then three
// random groups.
func writePhone(lw *lineWriter, s *stream, nation int64) {
	a, b, c := s.intn(100, 999), s.intn(100, 999), s.intn(1000, 9999)
	cc := 10 + nation%90
	lw.buf = append(lw.buf, byte('0'+cc/10), byte('0'+cc%10), '-',
		byte('0'+a/100), byte('0'+a/10%10), byte('0'+a%10), '-',
		byte('0'+b/100), byte('0'+b/10%10), byte('0'+b%10), '-',
		byte('0'+c/1000), byte('0'+c/100%10), byte('0'+c/10%10), byte('0'+c%10), '|')
}

// partPrice is P_RETAILPRICE in cents (Clause 4.2.3): 90000 + ((key/10) mod 20001) + 100 ×
// (key mod 1000).
func partPrice(key int64) int64 { return 90000 + (key/10)%20001 + 100*(key%1000) }

// partSupplier is the i-th supplier (0..3) of a part (Clause 4.2.3, PS_SUPPKEY).
func partSupplier(part, i, suppliers int64) int64 {
	return (part+i*(suppliers/suppsPerPart+(part-1)/suppliers))%suppliers + 1
}

// sparseKey is dbgen's mk_sparse (Clause 4.2.3, O_ORDERKEY): orders use only the first 8 of
// every 32 keys; update sets use the gaps (seq 1..3).
func sparseKey(i int64, seq int64) int64 { return ((i>>3)<<2+seq)<<3 + i&7 }

// Keys is the range [first, last] of the first column's values in the lines of base rows
// [from, to) of t (from < to): the key, or the key's first column (PartSupp's part,
// LineItem's order). It grows with the base row, so the lines of disjoint row ranges hold
// disjoint key ranges.
func (g *Generator) Keys(t Table, from, to int64) (first, last int64) {
	switch t {
	case Nation, Region:
		return from, to - 1
	case Orders, LineItem:
		return sparseKey(from+1, 0), sparseKey(to, 0)
	}
	return from + 1, to
}

func (g *Generator) writeNation(lw *lineWriter, from, to int64) {
	d := distsByUse.Get()
	p := g.textPool()
	c := newComment(seedNationComment, 72, 1)
	c.s.skipRows(from)
	for i := from; i < to; i++ {
		lw.int(i)
		lw.str(d.nations.values[i])
		lw.int(int64(d.nations.cumulative[i]))
		c.write(lw, p)
		c.s.rowDone()
		lw.end()
	}
}

func (g *Generator) writeRegion(lw *lineWriter, from, to int64) {
	d := distsByUse.Get()
	p := g.textPool()
	c := newComment(seedRegionComment, 72, 1)
	c.s.skipRows(from)
	for i := from; i < to; i++ {
		lw.int(i)
		lw.str(d.regions.values[i])
		c.write(lw, p)
		c.s.rowDone()
		lw.end()
	}
}

func (g *Generator) writePart(lw *lineWriter, from, to int64) {
	d := distsByUse.Get()
	p := g.textPool()
	colors := d.colors.values
	name := newStream(seedPartName, int32(len(colors)))
	mfgr, brand := newStream(seedPartMfgr, 1), newStream(seedPartBrand, 1)
	typ, size := newStream(seedPartType, 1), newStream(seedPartSize, 1)
	container := newStream(seedPartContainer, 1)
	c := newComment(seedPartComment, 14, 1)
	streams := []*stream{&name, &mfgr, &brand, &typ, &size, &container, &c.s}
	for _, s := range streams {
		s.skipRows(from)
	}
	perm := make([]uint8, len(colors))
	for i := from; i < to; i++ {
		key := i + 1
		lw.int(key)
		// P_NAME: five distinct colors, the first five of a partial shuffle (dbgen's agg_str).
		for j := range perm {
			perm[j] = uint8(j)
		}
		for j := int32(0); j < 5; j++ {
			k := name.intn(j, int32(len(perm))-1)
			perm[j], perm[k] = perm[k], perm[j]
			if j > 0 {
				lw.buf = append(lw.buf, ' ')
			}
			lw.buf = append(lw.buf, colors[perm[j]]...)
		}
		lw.buf = append(lw.buf, '|')
		m := int64(mfgr.intn(1, 5))
		lw.buf = append(append(lw.buf, "Manufacturer#"...), byte('0'+m), '|')
		b := m*10 + int64(brand.intn(1, 5))
		lw.buf = append(append(lw.buf, "Brand#"...), byte('0'+b/10), byte('0'+b%10), '|')
		lw.str(d.types.random(&typ))
		lw.int(int64(size.intn(1, 50)))
		lw.str(d.containers.random(&container))
		lw.money(partPrice(key))
		c.write(lw, p)
		for _, s := range streams {
			s.rowDone()
		}
		lw.end()
	}
}

func (g *Generator) writePartSupp(lw *lineWriter, from, to int64) {
	p := g.textPool()
	suppliers := scaled(supplierBase, g.sf)
	qty := newStream(seedPSQty, suppsPerPart)
	cost := newStream(seedPSCost, suppsPerPart)
	c := newComment(seedPSComment, 124, suppsPerPart)
	streams := []*stream{&qty, &cost, &c.s}
	for _, s := range streams {
		s.skipRows(from)
	}
	for i := from; i < to; i++ {
		part := i + 1
		for n := int64(0); n < suppsPerPart; n++ {
			lw.int(part)
			lw.int(partSupplier(part, n, suppliers))
			lw.int(int64(qty.intn(1, 9999)))
			lw.money(int64(cost.intn(100, 100000)))
			c.write(lw, p)
			lw.end()
		}
		for _, s := range streams {
			s.rowDone()
		}
	}
}

func (g *Generator) writeSupplier(lw *lineWriter, from, to int64) {
	d := distsByUse.Get()
	p := g.textPool()
	address := newStream(seedSuppAddress, 9)
	nation := newStream(seedSuppNation, 1)
	phone := newStream(seedSuppPhone, 3)
	balance := newStream(seedSuppBalance, 1)
	c := newComment(seedSuppComment, 63, 1)
	bbb, junk := newStream(seedBBBComment, 1), newStream(seedBBBJunk, 1)
	offset, typ := newStream(seedBBBOffset, 1), newStream(seedBBBType, 1)
	streams := []*stream{&address, &nation, &phone, &balance, &c.s, &bbb, &junk, &offset, &typ}
	for _, s := range streams {
		s.skipRows(from)
	}
	for i := from; i < to; i++ {
		key := i + 1
		lw.int(key)
		lw.padded("Supplier#", key)
		writeAlnum(lw, &address, 25)
		n := int64(nation.intn(0, int32(len(d.nations.values))-1))
		lw.int(n)
		writePhone(lw, &phone, n)
		lw.money(int64(balance.intn(-99999, 999999)))
		start := len(lw.buf)
		c.write(lw, p)
		// Clause 4.2.3: about 10 in 10,000 suppliers get "Customer ... Complaints" or
		// "Customer ... Recommends" written over their comment at a random place.
		if bbb.intn(1, supplierBase) <= 10 {
			text := lw.buf[start : len(lw.buf)-1]
			noise := int(junk.intn(0, int32(len(text)-bbbLength)))
			at := int(offset.intn(0, int32(len(text)-(bbbLength+noise))))
			verdict := "Recommends"
			if typ.intn(0, 100) < 50 {
				verdict = "Complaints"
			}
			copy(text[at:], "Customer ")
			copy(text[at+len("Customer ")+noise:], verdict)
		}
		for _, s := range streams {
			s.rowDone()
		}
		lw.end()
	}
}

func (g *Generator) writeCustomer(lw *lineWriter, from, to int64) {
	d := distsByUse.Get()
	p := g.textPool()
	address := newStream(seedCustAddress, 9)
	nation := newStream(seedCustNation, 1)
	phone := newStream(seedCustPhone, 3)
	balance := newStream(seedCustBalance, 1)
	segment := newStream(seedCustSegment, 1)
	c := newComment(seedCustComment, 73, 1)
	streams := []*stream{&address, &nation, &phone, &balance, &segment, &c.s}
	for _, s := range streams {
		s.skipRows(from)
	}
	for i := from; i < to; i++ {
		key := i + 1
		lw.int(key)
		lw.padded("Customer#", key)
		writeAlnum(lw, &address, 25)
		n := int64(nation.intn(0, int32(len(d.nations.values))-1))
		lw.int(n)
		writePhone(lw, &phone, n)
		lw.money(int64(balance.intn(-99999, 999999)))
		lw.str(d.segments.random(&segment))
		c.write(lw, p)
		for _, s := range streams {
			s.rowDone()
		}
		lw.end()
	}
}

// orderStreams are the streams an order and its lines draw from (dbgen's mk_order).
type orderStreams struct {
	date, lines, cust, prio, clerk           stream
	comment                                  comment
	qty, discount, tax, part, supp           stream
	ship, commit, receipt, flag, instr, mode stream
	lineComment                              comment
}

func newOrderStreams() *orderStreams {
	return &orderStreams{
		date: newStream(seedOrderDate, 1), lines: newStream(seedOrderLines, 1),
		cust: newStream(seedOrderCust, 1), prio: newStream(seedOrderPrio, 1),
		clerk: newStream(seedOrderClerk, 1), comment: newComment(seedOrderComment, 49, 1),
		qty: newStream(seedLineQty, maxLines), discount: newStream(seedLineDiscount, maxLines),
		tax: newStream(seedLineTax, maxLines), part: newStream(seedLinePart, maxLines),
		supp: newStream(seedLineSupp, maxLines), ship: newStream(seedLineShip, maxLines),
		commit: newStream(seedLineCommit, maxLines), receipt: newStream(seedLineRcpt, maxLines),
		flag: newStream(seedLineFlag, maxLines), instr: newStream(seedLineInstruct, maxLines),
		mode: newStream(seedLineMode, maxLines), lineComment: newComment(seedLineComment, 27, maxLines),
	}
}

func (o *orderStreams) all() []*stream {
	return []*stream{&o.date, &o.lines, &o.cust, &o.prio, &o.clerk, &o.comment.s,
		&o.qty, &o.discount, &o.tax, &o.part, &o.supp, &o.ship, &o.commit, &o.receipt,
		&o.flag, &o.instr, &o.mode, &o.lineComment.s}
}

func (o *orderStreams) skipRows(n int64) {
	for _, s := range o.all() {
		s.skipRows(n)
	}
}

func (o *orderStreams) rowDone() {
	for _, s := range o.all() {
		s.rowDone()
	}
}

// orderRange is a run of orders: dbgen's indexes first+1 .. first+count, keyed with seq (0
// for the base data, 1.. for update sets), drawn from the streams' rows at .. at+count.
type orderRange struct{ first, count, seq, at int64 }

func baseOrders(from, to int64) orderRange {
	return orderRange{first: from, count: to - from, at: from}
}

// writeOrders writes the orders of r; their totals and status come from their lines, which
// are drawn but not written.
func (g *Generator) writeOrders(lw *lineWriter, r orderRange) {
	d := distsByUse.Get()
	p := g.textPool()
	o := newOrderStreams()
	o.skipRows(r.at)
	customers, parts := scaled(customerBase, g.sf), scaled(partBase, g.sf)
	clerks := int32(math.Max(g.sf*1000, 1000))
	for i := r.first + 1; i <= r.first+r.count; i++ {
		text := o.comment.next(p)
		lw.int(sparseKey(i, r.seq))
		date := o.date.intn(minDate, orderDateMax)
		// Clause 4.2.3: O_CUSTKEY never names a customer whose key is a multiple of 3.
		cust, delta := int64(o.cust.intn(1, int32(customers))), int64(1)
		for cust%3 == 0 {
			cust = min(cust+delta, customers)
			delta = -delta
		}
		lw.int(cust)
		lines := o.lines.intn(1, maxLines)
		var total int64
		shipped := int32(0)
		for l := int32(0); l < lines; l++ {
			qty, disc, tax := int64(o.qty.intn(1, 50)), int64(o.discount.intn(0, 10)), int64(o.tax.intn(0, 8))
			ext := partPrice(int64(o.part.intn(1, int32(parts)))) * qty
			total += ext * (100 - disc) / 100 * (100 + tax) / 100
			if o.ship.intn(1, 121)+date <= pastDate {
				shipped++
			}
		}
		switch {
		case shipped == lines:
			lw.byte('F')
		case shipped > 0:
			lw.byte('P')
		default:
			lw.byte('O')
		}
		lw.money(total)
		lw.date(date)
		lw.str(d.priorities.random(&o.prio))
		lw.padded("Clerk#", int64(o.clerk.intn(1, clerks)))
		lw.buf = append(lw.buf, '0', '|')
		writeText(lw, p, text)
		lw.end()
		o.rowDone()
	}
}

// writeLineItems writes the lines of the orders of r.
func (g *Generator) writeLineItems(lw *lineWriter, r orderRange) {
	d := distsByUse.Get()
	p := g.textPool()
	o := newOrderStreams()
	o.skipRows(r.at)
	suppliers, parts := scaled(supplierBase, g.sf), scaled(partBase, g.sf)
	for i := r.first + 1; i <= r.first+r.count; i++ {
		key := sparseKey(i, r.seq)
		date := o.date.intn(minDate, orderDateMax)
		lines := o.lines.intn(1, maxLines)
		for l := int32(1); l <= lines; l++ {
			text := o.lineComment.next(p)
			lw.int(key)
			qty, disc, tax := int64(o.qty.intn(1, 50)), int64(o.discount.intn(0, 10)), int64(o.tax.intn(0, 8))
			part := int64(o.part.intn(1, int32(parts)))
			lw.int(part)
			lw.int(partSupplier(part, int64(o.supp.intn(0, 3)), suppliers))
			lw.int(int64(l))
			lw.int(qty)
			lw.money(partPrice(part) * qty)
			lw.money(disc)
			lw.money(tax)
			ship := o.ship.intn(1, 121) + date
			commit := o.commit.intn(30, 90) + date
			receipt := o.receipt.intn(1, 30) + ship
			if receipt <= pastDate {
				lw.str(d.flags.random(&o.flag))
			} else {
				lw.byte('N')
			}
			if ship <= pastDate {
				lw.byte('F')
			} else {
				lw.byte('O')
			}
			lw.date(ship)
			lw.date(commit)
			lw.date(receipt)
			lw.str(d.instruct.random(&o.instr))
			lw.str(d.modes.random(&o.mode))
			writeText(lw, p, text)
			lw.end()
		}
		o.rowDone()
	}
}
