package qgen

// The distributions of dists.dss that qgen's substitutions draw from, in
// the file's order (the order is part of the draw). All weigh 1 each.

var (
	distRegions  = uniformDist("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
	distNations2 = uniformDist("ALGERIA", "ARGENTINA", "BRAZIL", "CANADA", "EGYPT", "ETHIOPIA",
		"FRANCE", "GERMANY", "INDIA", "INDONESIA", "IRAN", "IRAQ", "JAPAN", "JORDAN", "KENYA",
		"MOROCCO", "MOZAMBIQUE", "PERU", "CHINA", "ROMANIA", "SAUDI ARABIA", "VIETNAM", "RUSSIA",
		"UNITED KINGDOM", "UNITED STATES")
	distSegments   = uniformDist("AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY")
	distShipModes  = uniformDist("REG AIR", "AIR", "RAIL", "TRUCK", "MAIL", "FOB", "SHIP")
	distQ13a       = uniformDist("special", "pending", "unusual", "express")
	distQ13b       = uniformDist("packages", "requests", "accounts", "deposits")
	distContainers = crossDist([]string{"SM", "LG", "MED", "JUMBO", "WRAP"},
		[]string{"CASE", "BOX", "BAG", "JAR", "PACK", "PKG", "CAN", "DRUM"})
	distTypes = crossDist(
		crossDist([]string{"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"},
			[]string{"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"}).names,
		[]string{"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"})
	distColors = uniformDist("almond", "antique", "aquamarine", "azure", "beige", "bisque", "black",
		"blanched", "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon",
		"chocolate", "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim",
		"dodger", "drab", "firebrick", "floral", "forest", "frosted", "gainsboro", "ghost",
		"goldenrod", "green", "grey", "honeydew", "hot", "indian", "ivory", "khaki", "lace",
		"lavender", "lawn", "lemon", "light", "lime", "linen", "magenta", "maroon", "medium",
		"metallic", "midnight", "mint", "misty", "moccasin", "navajo", "navy", "olive", "orange",
		"orchid", "pale", "papaya", "peach", "peru", "pink", "plum", "powder", "puff", "purple",
		"red", "rose", "rosy", "royal", "saddle", "salmon", "sandy", "seashell", "sienna", "sky",
		"slate", "smoke", "snow", "spring", "steel", "tan", "thistle", "tomato", "turquoise",
		"violet", "wheat", "white", "yellow")
)

// nationRegion is the region (index into distRegions) of each nation of
// distNations2 (Clause 4.2.3; dists.dss's "nations" weights).
var nationRegion = [25]int{0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2, 4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1}

// crossDist is the uniform distribution of "a b" for a in first, b in
// second, first-major (the order of dists.dss's p_types and p_cntr).
func crossDist(first, second []string) dist {
	var names []string
	for _, a := range first {
		for _, b := range second {
			names = append(names, a+" "+b)
		}
	}
	return uniformDist(names...)
}
